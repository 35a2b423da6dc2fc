package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Settled is what Reconcile did with one operation whose outcome was unknown.
type Settled struct {
	Key    string     `json:"key"`
	Tool   string     `json:"tool"`
	RunID  string     `json:"run_id"`
	Code   types.Code `json:"code"`
	Result string     `json:"observation"`
}

// Reconcile settles every operation whose outcome is unknown (left started
// by a crash, or unknown after a timeout): each is repeated as a call of its
// own run with its recorded arguments, so the ledger runs the tool's verify
// read first (or, where the dependency honours the operation key, re-sends
// under the same key). Nothing is executed blindly. The repeat is a call
// like any other: it is validated, recorded in the run's history and, when
// verified, applies the tool's state update that the lost call never did.
//
// First, operations still started by an owner that is gone are made
// unknown (surfaceGone), so that they are settled too.
func (p *Pipeline) Reconcile(ctx context.Context, limit int) ([]Settled, error) {
	if err := p.surfaceGone(ctx, limit); err != nil {
		return nil, err
	}
	ops, err := p.store.ListOperations(ctx, types.OpUnknown, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Settled, 0, len(ops))
	batch := randomID(4) // call ids unique across reconcile runs
	for i, op := range ops {
		s := Settled{Key: op.Key, Tool: op.Tool, RunID: op.RunID}
		if len(op.Args) == 0 {
			s.Code, s.Result = types.CodeUnknownOutcome, "no arguments recorded for this operation (written by an older toolgate); settle it by hand"
			out = append(out, s)
			continue
		}
		res, err := p.call(ctx, &types.Call{RunID: op.RunID, Tool: op.Tool, Args: op.Args, CallID: fmt.Sprintf("reconcile-%s-%d", batch, i+1)}, op.Key)
		if err != nil {
			s.Code, s.Result = types.CodeInternalError, err.Error()
		} else {
			s.Code, s.Result = res.Code(), res.Observation
		}
		out = append(out, s)
	}
	return out, nil
}

// goneWait bounds how long Reconcile watches the owners of started
// operations for the end of their liveness: longer than the store's
// fencing delay (2.5 s by default), after which a gone owner is taken over.
const goneWait = 4 * time.Second

// surfaceGone turns unknown the started operations whose lease ended, and,
// with a store.Fencer, those whose owner's liveness is gone (a replica that
// crashed, or was cut from the database and came back under a new owner
// id). Owners that stay live keep theirs: their calls are still running.
func (p *Pipeline) surfaceGone(ctx context.Context, limit int) error {
	if _, err := p.store.ExpireLeases(ctx, p.clock.Now()); err != nil {
		return err
	}
	if p.fencer == nil {
		return nil
	}
	ops, err := p.store.ListOperations(ctx, types.OpStarted, limit)
	if err != nil {
		return err
	}
	owners := map[string]bool{}
	for _, op := range ops {
		owners[op.Owner] = true
	}
	deadline := time.Now().Add(goneWait)
	for len(owners) > 0 && time.Now().Before(deadline) {
		for owner := range owners {
			gone, err := p.fencer.TakeOver(ctx, owner)
			if err != nil {
				return err
			}
			if gone {
				delete(owners, owner)
			}
		}
		if len(owners) == 0 {
			break
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
