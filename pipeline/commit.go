package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// stateChange is the state update of a call (stage 7), computed against the
// state the call read before the feedback, so that the observation can say
// when it is left out.
type stateChange struct {
	updates bool            // the call updates the state: patch applies
	patch   json.RawMessage // the update, against the state last read
	answer  any             // the decoded answer, to compute it again (statePatch)
	note    string          // why the update (or the settlement) is left out, for the feedback
}

// stateUpdate computes what the commit will change: the state patch of a
// successful call whose tool has state updates, and whether the operation's
// settlement still stands (fencedSettlement).
func (p *Pipeline) stateUpdate(f *flight, res *types.Result) stateChange {
	if p.fencedSettlement(f) {
		return stateChange{note: "toolgate lost its connection to the shared database before recording this outcome, so the run's state was not updated; the operation is checked again on the next repeat."}
	}
	if !res.OK || res.Meta.Replayed || f.checked == nil || len(f.checked.Tool.StateExprs) == 0 {
		return stateChange{}
	}
	u := stateChange{updates: true}
	answer, err := jsontext.Decode(res.Data)
	if err == nil {
		u.answer = answer
		u.patch, err = statePatch(f, answer, f.checked.Vars.State)
	}
	if err == nil {
		err = checkStateSize(f.cfg.tools, f.run.State, u.patch)
	}
	if err != nil {
		return stateChange{note: "The run's state was not updated: " + err.Error() + "."}
	}
	return u
}

// statePatch is the pure state update of f's tool for its decoded answer,
// against st.
func statePatch(f *flight, answer any, st map[string]any) (json.RawMessage, error) {
	vars := *f.checked.Vars
	vars.State, vars.Result = st, answer
	patch, err := state.Patch(f.checked.Tool.StateExprs, &vars)
	if err != nil {
		return nil, err
	}
	return jsontext.Canonical(patch), nil
}

// commit writes the call's records in one transaction: the execution row
// (stage 6), the run's new state (stage 7) and the operation's settlement.
// It re-reads the run and re-applies the (pure) state update when another
// call of the same run committed first.
func (p *Pipeline) commit(ctx context.Context, f *flight, res *types.Result, finished time.Time, u stateChange) error {
	run := f.run
	for {
		var newState json.RawMessage
		if u.updates {
			var err error
			if newState, err = state.ApplyRaw(run.State, u.patch); err != nil {
				return err
			}
			if max := maxStateBytes(f.cfg.tools); int64(len(newState)) > max {
				// Checked in stateUpdate against the state the call read;
				// a newer state may be bigger: the update is left out.
				p.log.Warn("state update left out: the state would exceed max_state_bytes", "run", run.ID, "tool", f.call.Tool, "bytes", len(newState), "max", max)
				newState, u = nil, stateChange{}
			}
		}
		row, c, err := p.row(f, res, finished, u.patch)
		if err != nil {
			return err
		}
		c.NewState, c.ExpectVersion = newState, run.Version
		err = p.store.Commit(ctx, c)
		if errors.Is(err, store.ErrVersionConflict) {
			if run, err = p.store.GetRun(ctx, run.ID); err != nil {
				return err
			}
			if u, err = p.reapply(f, run, u); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if f.admission == stepInCommit {
			res.Meta.Step = row.Step
		}
		for _, s := range p.sinks {
			s.Record(row)
		}
		return nil
	}
}

// row is the call's execution row (stage 6) and the commit that writes it,
// with the operation's settlement and, for stepInCommit, the step.
func (p *Pipeline) row(f *flight, res *types.Result, finished time.Time, patch json.RawMessage) (*types.Execution, *store.Commit, error) {
	argsHash := ""
	if f.checked != nil {
		argsHash = f.checked.ArgsHash
	}
	row, stepAt, err := monitor.Row(&monitor.Facts{
		Call: f.call, Result: res, Dependency: res.Meta.Dependency, ArgsHash: argsHash,
		Retries: f.retries, Started: f.started, Finished: finished, StatePatch: patch,
		ArgsValid: f.checked != nil && len(bytes.TrimSpace(f.call.Args)) > 0,
	})
	if err != nil {
		return nil, nil, err
	}
	if f.traceID.IsValid() {
		row.TraceID = f.traceID.String()
	}
	c := &store.Commit{Execution: row, ReleaseWriter: f.holder}
	if f.admission == stepInCommit {
		encoded := row.Result
		c.TakeStep = func(step int64) json.RawMessage { return monitor.WithStep(encoded, stepAt, step) }
	}
	if f.settled {
		c.Operation = &store.OperationUpdate{Key: f.key, Status: f.opStatus, At: row.FinishedAt}
		if f.opStatus != "" {
			c.Operation.Result = row.Result
		}
	}
	return row, c, nil
}

// reapply computes the state update again against run, newer than the one
// the call read. An update that no longer applies is left out: the row is
// recorded without it, and the log shows no patch.
func (p *Pipeline) reapply(f *flight, run *types.Run, u stateChange) (stateChange, error) {
	if !u.updates {
		return u, nil
	}
	st, err := state.Decode(run.State)
	if err != nil {
		return u, err
	}
	if u.patch, err = statePatch(f, u.answer, st); err != nil {
		p.log.Warn("state update failed after a concurrent commit", "run", run.ID, "tool", f.call.Tool, "err", err)
		return stateChange{}, nil
	}
	return u, nil
}

// fencedSettlement reports whether the call's ledger settlement must be
// dropped, and drops it: the write was begun under a liveness fence that
// no longer holds, so other processes may have taken its operation over
// (and may settle it, and apply its state update, themselves). A deletion
// stays: it records that nothing was delivered, and leaves the key free.
func (p *Pipeline) fencedSettlement(f *flight) bool {
	if f.fence == nil || !f.settled || f.opStatus == "" || p.fencer.Holds(*f.fence) {
		return false
	}
	p.log.Warn("liveness lost before the outcome was recorded; the operation is left to be checked again", "key", f.key, "owner", f.fence.Owner)
	f.settled = false
	return true
}

// maxStateBytes is the config's max_state_bytes, or its default.
func maxStateBytes(cfg *config.Config) int64 {
	if cfg.MaxStateBytes > 0 {
		return cfg.MaxStateBytes
	}
	return config.DefaultMaxStateBytes
}

// checkStateSize refuses a state update that would make the run's state
// larger than max_state_bytes: an unbounded state would be stored whole,
// with its patch, at every call.
func checkStateSize(cfg *config.Config, old, patch json.RawMessage) error {
	max := maxStateBytes(cfg)
	if int64(len(old))+int64(len(patch)) <= max {
		return nil // cannot exceed it: spare the trial application
	}
	newState, err := state.ApplyRaw(old, patch)
	if err != nil {
		return err
	}
	if int64(len(newState)) > max {
		return fmt.Errorf("the update would make it %d bytes, more than max_state_bytes (%d); the call's own outcome above stands", len(newState), max)
	}
	return nil
}
