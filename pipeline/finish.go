package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/envelope"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/expr"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/observe"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// finish is stages 4 to 7 for every call: complete the envelope, write the
// observation, build the execution row, apply the state, and commit row,
// ledger status and state in one transaction.
func (p *Pipeline) finish(ctx context.Context, f *flight, res *types.Result) *types.Result {
	effect := types.Effect("")
	facts := &observe.Facts{Status: f.status, RetryAfter: f.wait, Verified: f.verified, RuleNext: f.ruleNext, DataDepth: f.dataDepth}
	if fail := f.failure; fail != nil && res.Code() == fail.Code {
		// An answer that will be the same on a repeat: a status the
		// dependency does not use for passing trouble (a redirect, 501),
		// or one too large to take.
		facts.TooLarge = fail.Kind == execute.KindTooLarge
		facts.Permanent = facts.TooLarge || fail.Kind == execute.KindStatus && !fail.Transient
	}
	m := &res.Meta
	m.RunID, m.Step, m.Tool, m.CallID = f.run.ID, f.step, f.call.Tool, f.call.CallID
	m.Attempts, m.IdempotencyKey, m.Verified = f.attempts, f.key, m.Verified || f.verified
	m.ApprovalID = f.approvalID
	if f.spec != nil {
		effect = f.spec.Effect
		m.Dependency = f.spec.Dependency
		facts.Effect, facts.Dependency = effect, f.spec.Dependency
		facts.ReadTimeout, facts.MaxBytes = f.spec.Timeout.Read.D(), f.spec.MaxObservationBytes
		if f.spec.Verify != nil {
			facts.VerifyWith = f.spec.Verify.Lookup
		}
	}
	if f.replayOf != nil {
		at := f.replayOf.CompletedAt
		if at.IsZero() {
			at = f.replayOf.UpdatedAt
		}
		m.CompletedAt, facts.CompletedAt = &at, at
	}
	if res.OK && !m.Replayed && f.checked != nil {
		// An answer that breaks the declared output_schema is not data:
		// strict clients (MCP structuredContent) would reject the result.
		if err := f.checked.Tool.CheckOutput(res.Data); err != nil {
			facts.Answer = res.Data
			res.OK, res.Data = false, json.RawMessage("null")
			res.Error = &types.Error{Code: types.CodeInvalidOutput, Message: "the answer of " + f.call.Tool + " does not match its output_schema: " + err.Error()}
		}
	}
	envelope.Settle(res, effect, f.delivered)
	if !res.OK && m.SideEffect == types.SideEffectUnknown && facts.VerifyWith == "" && f.spec != nil {
		var who *types.Principal
		if f.run != nil {
			who = &f.run.Principal
		}
		facts.ReadTools = readToolsLike(f.cfg.tools, f.spec, who)
	}
	finished := p.clock.Now()
	m.ElapsedMS = finished.Sub(f.started).Milliseconds()

	// The state update is computed here against the state the call read,
	// so the observation can say if it failed; commit reuses it unless
	// another call of the run committed first.
	var patchFor func(map[string]any) (json.RawMessage, error)
	var patch json.RawMessage
	fenced := p.fencedSettlement(f)
	if fenced {
		facts.Note = "toolgate lost its connection to the shared database before recording this outcome, so the run's state was not updated; the operation is checked again on the next repeat."
	}
	if !fenced && res.OK && !m.Replayed && f.checked != nil && len(f.checked.Tool.StateExprs) > 0 {
		data, err := expr.Decode(res.Data)
		if err == nil {
			patchFor = func(st map[string]any) (json.RawMessage, error) {
				vars := *f.checked.Vars
				vars.State, vars.Result = st, data
				p, err := state.Patch(f.checked.Tool.StateExprs, &vars)
				if err != nil {
					return nil, err
				}
				return expr.Canonical(p), nil
			}
			patch, err = patchFor(f.state)
		}
		if err == nil {
			err = checkStateSize(f.cfg.tools, f.run.State, patch)
		}
		if err != nil {
			facts.Note = "The run's state was not updated: " + err.Error() + "."
			patch, patchFor = nil, nil
		}
	}
	observe.Annotate(res, facts)

	envelopeForOp := res
	err := p.commit(ctx, f, res, finished, patch, patchFor)
	if f.takeStep && errors.Is(err, store.ErrStepBudget) {
		// The run's last step went to another call between this call's
		// admission and its commit: it is answered (and recorded) as
		// refused for the budget; a read's request changed nothing.
		f.takeStep = false
		return p.finish(ctx, f, p.exhausted(f))
	}
	if err != nil {
		p.log.Error("commit failed", "run", f.run.ID, "tool", f.call.Tool, "step", f.step, "err", err)
		failed := envelope.Fail(types.CodeInternalError, "toolgate could not record the outcome of this call.", *m)
		failed.Meta.Next = types.NextEscalate
		if f.attempts > 0 && effect == types.EffectWrite {
			failed.Meta.SideEffect = types.SideEffectUnknown
			failed.Observation = "toolgate could not record the outcome of this call (internal_error). The action MAY have been carried out; do not repeat it as a new action. Repeating this exact call is safe: toolgate will check before sending anything. If that fails too, escalate."
			failed.Meta.Next = types.NextVerify
		} else {
			failed.Meta.SideEffect = types.SideEffectNone
			failed.Observation = "toolgate could not record this call (internal_error); nothing was done. Try again shortly, or escalate if it keeps happening."
		}
		envelopeForOp = failed
	}
	p.releaseSlot(ctx, f, err == nil)
	if f.key != "" && f.opUpdate != nil {
		p.waiters.notify(f.key)
	}
	if level := levelFor(envelopeForOp); p.log.Enabled(ctx, level) {
		p.log.LogAttrs(ctx, level, "call", slogAttrs(envelopeForOp)...)
	}
	return envelopeForOp
}

// commit writes the call's records in one transaction, re-reading the run
// and re-applying the (pure) state update when another call of the same run
// committed first.
//
// patch is the update computed against f.state; patchFor computes it again
// against a newer state (nil when the call updates no state).
func (p *Pipeline) commit(ctx context.Context, f *flight, res *types.Result, finished time.Time, patch json.RawMessage, patchFor func(map[string]any) (json.RawMessage, error)) error {
	run := f.run
	for {
		var newState json.RawMessage
		if patchFor != nil {
			var err error
			if newState, err = state.ApplyRaw(run.State, patch); err != nil {
				return err
			}
			if max := maxStateBytes(f.cfg.tools); int64(len(newState)) > max {
				// Checked in finish against the state the call read; a
				// newer state may be bigger: the update is left out.
				p.log.Warn("state update left out: the state would exceed max_state_bytes", "run", run.ID, "tool", f.call.Tool, "bytes", len(newState), "max", max)
				newState, patch, patchFor = nil, nil, nil
			}
		}
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
			return err
		}
		if f.traceID.IsValid() {
			row.TraceID = f.traceID.String()
		}
		c := &store.Commit{Execution: row, NewState: newState, ExpectVersion: run.Version, ReleaseWriter: f.holder}
		if f.takeStep {
			encoded := row.Result
			c.TakeStep = func(step int64) json.RawMessage { return monitor.WithStep(encoded, stepAt, step) }
		}
		if f.opUpdate != nil {
			u := *f.opUpdate
			u.At = row.FinishedAt
			if u.Status != "" {
				u.Result = row.Result
			}
			c.Operation = &u
		}
		err = p.store.Commit(ctx, c)
		if err == nil && f.takeStep {
			res.Meta.Step = row.Step
		}
		if errors.Is(err, store.ErrVersionConflict) {
			if run, err = p.store.GetRun(ctx, run.ID); err != nil {
				return err
			}
			if patchFor != nil {
				st, err := state.Decode(run.State)
				if err != nil {
					return err
				}
				if patch, err = patchFor(st); err != nil {
					// The update no longer applies to the newer state: the
					// row is recorded without it, and the log shows no patch.
					p.log.Warn("state update failed after a concurrent commit", "run", run.ID, "tool", f.call.Tool, "err", err)
					patch, patchFor = nil, nil
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		for _, s := range p.sinks {
			s.Record(row)
		}
		return nil
	}
}

// fencedSettlement reports whether the call's ledger settlement must be
// dropped, and drops it: the write was begun under a liveness fence that
// no longer holds, so other processes may have taken its operation over
// (and may settle it, and apply its state update, themselves). A deletion
// stays: it records that nothing was delivered, and leaves the key free.
func (p *Pipeline) fencedSettlement(f *flight) bool {
	if f.fence == nil || f.opUpdate == nil || f.opUpdate.Status == "" || p.fencer.Holds(*f.fence) {
		return false
	}
	p.log.Warn("liveness lost before the outcome was recorded; the operation is left to be checked again", "key", f.key, "owner", f.fence.Owner)
	f.opUpdate = nil
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
