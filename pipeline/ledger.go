package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// beginWrite writes a write's intent to the ledger (begin), unless its
// admission began it already (limited). It answers nil when the call must
// execute.
func (p *Pipeline) beginWrite(ctx context.Context, f *flight) *types.Result {
	if f.expectKey != "" && f.expectKey != f.key {
		return types.Fail(types.CodeUnknownOutcome, fmt.Sprintf("the operation key derived today (%s) is not the recorded one (%s): the tool's idempotency.key changed. Nothing was sent; settle this operation by hand", f.key, f.expectKey), types.Meta{})
	}
	if f.admission == limited || f.spec.Effect != types.EffectWrite {
		return nil
	}
	return p.begin(ctx, f, f.admission == stepWithBegin)
}

// begin writes the operation's intent to the ledger before anything is
// sent. It returns nil when this call owns the operation and must execute
// it, or the result of a call that must not execute (a replay, a conflict,
// an operation still in flight, an unknown outcome being verified).
//
// withStep (admission stepWithBegin) makes the first write also take the
// call's step.
func (p *Pipeline) begin(ctx context.Context, f *flight, withStep bool) *types.Result {
	for {
		existing, began, res := p.beginOnce(ctx, f, withStep)
		withStep = false
		switch {
		case res != nil:
			return res
		case began && f.expectKey != "":
			// Settling only: the operation is gone, so nothing may be sent.
			f.settle("")
			return types.Fail(types.CodeUnknownOutcome, fmt.Sprintf("operation %s is no longer in the ledger; nothing was sent", f.key), types.Meta{})
		case began:
			return nil
		}
		if res, again := p.existing(ctx, f, existing, true); !again {
			return res
		}
	}
}

// beginOnce is one durable write of the operation's intent, under the
// store's liveness fence when it has one. began says this call begun it;
// otherwise existing is the operation found under its key.
func (p *Pipeline) beginOnce(ctx context.Context, f *flight, withStep bool) (existing *types.Operation, began bool, res *types.Result) {
	if p.fencer != nil {
		// Fencing: no write is begun (nor claimed) by a process that
		// cannot confirm it is alive in the shared store.
		fence, err := p.fencer.Fence()
		if err != nil {
			p.log.Error("write not admitted: no liveness in the store", "key", f.key, "err", err)
			return nil, false, storeUnavailable("toolgate cannot confirm its connection to the shared database right now, so it admits no write; nothing was sent")
		}
		f.fence = &fence
	}
	op := &types.Operation{
		Key: f.key, ArgsHash: f.checked.ArgsHash, Args: f.checked.Canonical, RunID: f.run.ID, Tool: f.spec.Name,
		Status: types.OpStarted, Owner: f.owner(p),
		LeaseUntil: f.deadline.Add(p.margin), CreatedAt: p.clock.Now(), UpdatedAt: p.clock.Now(),
	}
	var err error
	if withStep {
		var step int64
		step, existing, began, err = p.store.AdmitAndBegin(ctx, f.run.ID, op)
		if errors.Is(err, store.ErrStepBudget) {
			f.admission = notAdmitted
			return nil, false, exhausted(f.run.MaxSteps)
		}
		f.step = step
	} else {
		existing, began, err = p.store.BeginOperation(ctx, op)
	}
	if err != nil {
		p.log.Error("ledger begin failed", "key", f.key, "err", err)
		return nil, false, storeUnavailable("toolgate could not record the operation before sending it (its database did not answer in time), so nothing was sent")
	}
	return existing, began, nil
}

// existing answers a write whose operation another call began: a replay,
// a conflict, a wait for one in flight, or, when claim, a verify or a
// re-send of an unknown outcome. again says the ledger must be asked
// afresh (the operation was removed, or its outcome became known or
// unknown meanwhile; or, without claim, it is unknown).
//
// It is the one decision on an operation that exists, for begin (claim)
// and for a limited call admitted without the state-writer slot, which
// claims only when it needs no slot: a repeat that replays or waits
// changes no state, but one that verifies or re-sends may, so a state
// writer is admitted again under the slot first.
func (p *Pipeline) existing(ctx context.Context, f *flight, op *types.Operation, claim bool) (res *types.Result, again bool) {
	if conflict := argsConflict(f, op); conflict != nil {
		return conflict, false
	}
	switch op.Status {
	case types.OpCompleted:
		return p.replay(f, op), false
	case types.OpUnknown:
		if !claim {
			return nil, true
		}
		return p.claimUnknown(ctx, f, op)
	}
	// Started by another call: wait for its outcome until our deadline.
	done, err := p.await(ctx, f.key)
	switch {
	case err != nil:
		f.wait = time.Second
		return types.Fail(types.CodeDuplicateInFlight, fmt.Sprintf("operation %s is being executed by another call and did not finish within this call's deadline", f.key), types.Meta{}), false
	case done != nil && done.ArgsHash == f.checked.ArgsHash && done.Status == types.OpCompleted:
		return p.replay(f, done), false
	}
	// Removed (nothing happened: begin afresh), a conflict to report, or
	// unknown: claim it (and re-send or verify) on the next turn.
	return nil, true
}

// argsConflict is the answer to a write whose operation key names an
// operation begun with other arguments (idempotency_conflict), or nil when
// the arguments are the operation's own.
func argsConflict(f *flight, op *types.Operation) *types.Result {
	if op.ArgsHash == f.checked.ArgsHash {
		return nil
	}
	return types.Fail(types.CodeIdempotencyConflict, fmt.Sprintf(
		"operation %s already exists with different arguments (for example another reason or amount). If this is a new action, it needs arguments that make a new operation; if it is the same action, repeat it with the original arguments",
		f.key), types.Meta{})
}

// replay answers a repeat of a completed operation with its stored result
// and when it first completed; nothing is sent downstream.
func (p *Pipeline) replay(f *flight, op *types.Operation) *types.Result {
	var stored types.Result
	if err := json.Unmarshal(op.Result, &stored); err != nil {
		return types.Fail(types.CodeInternalError, "the stored result of this operation could not be read; it was done once already, so do not repeat it. Escalate.", types.Meta{})
	}
	at := completedAt(op)
	meta := types.Meta{Replayed: true, CompletedAt: &at}
	if stored.OK {
		res := types.OK(stored.Data, meta)
		res.Meta.Verified = stored.Meta.Verified
		return res
	}
	return types.Fail(stored.Error.Code, stored.Error.Message, meta)
}

// claimUnknown handles an operation whose outcome is unknown. It is claimed
// first, so that exactly one call re-sends it or verifies it: two repeats
// that both verified would both settle it and apply its state update twice.
// Another repeat finds it started and waits for this call's outcome.
func (p *Pipeline) claimUnknown(ctx context.Context, f *flight, op *types.Operation) (res *types.Result, again bool) {
	if f.keyHonoured() || f.spec.Verify != nil {
		claimed, err := p.store.ClaimOperation(ctx, f.key, f.owner(p), f.deadline.Add(p.margin))
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, true // removed meanwhile: nothing happened, begin afresh
		case err != nil:
			p.log.Error("claiming an operation failed", "key", f.key, "err", err)
			return storeUnavailable("toolgate could not claim the operation (its database did not answer in time); nothing was sent"), false
		case !claimed:
			return nil, true // another call claimed it: wait for its outcome
		case f.keyHonoured():
			// The dependency dedupes by our key: sending again is safe and is
			// the way to learn the outcome (checked by the verify read, when
			// there is one: see checkResent).
			f.resent = true
			return nil, false
		}
	}
	// Claimed, to be verified; or nothing to claim it for (no verify read,
	// no honoured key): verifyUnknown says so.
	return p.verifyUnknown(ctx, f, op), false
}
