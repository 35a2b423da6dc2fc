package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/feedback"
	"github.com/toolgate/toolgate/normalise"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// finish is stages 4 to 7 for every call (record), then what the call
// leaves behind: the state-writer slot, the waiters of its operation, its
// log line.
//
// A call whose step is taken by its commit (stepInCommit) may find the
// run's last step taken by another call between its admission and its
// commit: it is then recorded once more, answered as refused for the
// budget (a read's or a refusal's request changed nothing).
//
// The records are waited for until the call's deadline and commitGrace
// after it at most: a call whose records the store did not take by then
// is answered without them (unrecorded), and they are kept in the outbox,
// written as soon as the store takes them.
func (p *Pipeline) finish(ctx context.Context, f *flight, res *types.Result) *types.Result {
	ctx, cancel := context.WithTimeout(ctx, max(f.deadline.Sub(p.clock.Now()), 0)+commitGrace)
	defer cancel()
	err := p.record(ctx, f, res)
	if f.admission == stepInCommit && errors.Is(err, store.ErrStepBudget) {
		f.admission = notAdmitted
		res = exhausted(f.run.MaxSteps)
		err = p.record(ctx, f, res)
	}
	var k *kept
	if err != nil {
		p.log.Error("commit failed; the call's records are kept until the store takes them", "run", f.run.ID, "tool", f.call.Tool, "step", f.step, "err", err)
		res, k = p.unrecorded(f, res, f.finished)
	}
	p.releaseSlot(ctx, f, err == nil)
	if f.key != "" && f.settled && err == nil {
		p.waiters.notify(f.key)
	}
	if level := levelFor(res); p.log.Enabled(ctx, level) {
		p.log.LogAttrs(ctx, level, "call", slogAttrs(res)...)
	}
	if k != nil {
		p.keep(k) // last: the outbox's writer may read f from now on
	}
	return res
}

// record runs stages 4 to 7 on res, in list order. The state update is
// computed (pure) before the feedback, against the state the call read, so
// that the observation can say when it is left out; the commit applies it
// to the newest state.
func (p *Pipeline) record(ctx context.Context, f *flight, res *types.Result) error {
	finished, update := p.prepare(f, res)
	f.finished = finished
	// 6 monitor and 7 state: the execution row, the state and the
	// operation's settlement in one transaction.
	return p.commit(ctx, f, res, finished, update)
}

// prepare is stages 4, 5 and 7 computed: it completes res and returns
// when the call finished and what its commit changes.
func (p *Pipeline) prepare(f *flight, res *types.Result) (time.Time, stateChange) {
	finished := p.clock.Now()
	// 4 normalise: one result shape, whatever happened.
	rejected := p.normalise(f, res, finished)
	// 7, computed: what the commit will change in the run's state and
	// the ledger.
	update := p.stateUpdate(f, res)
	// 5 feedback: what happened, what to do next, what was left out.
	p.feedback(f, res, rejected, update.note)
	return finished, update
}

// normalise completes the envelope (stage 4): meta, an answer that breaks
// the declared output_schema made invalid_output, the side effect. It
// returns the rejected answer, if any, for the feedback to show.
func (p *Pipeline) normalise(f *flight, res *types.Result, finished time.Time) (rejected json.RawMessage) {
	effect := types.Effect("")
	m := &res.Meta
	m.RunID, m.Step, m.Tool, m.CallID = f.run.ID, f.step, f.call.Tool, f.call.CallID
	m.Attempts, m.IdempotencyKey, m.ApprovalID = f.attempts, f.key, f.approvalID
	if f.spec != nil {
		effect = f.spec.Effect
		m.Dependency = f.spec.Dependency
	}
	if res.OK && !m.Replayed && f.checked != nil {
		// An answer that breaks the declared output_schema is not data:
		// strict clients (MCP structuredContent) would reject the result.
		if err := f.checked.Tool.CheckOutput(res.Data); err != nil {
			rejected = res.Data
			res.OK, res.Data = false, json.RawMessage("null")
			res.Error = &types.Error{Code: types.CodeInvalidOutput, Message: "the answer of " + f.call.Tool + " does not match its output_schema: " + err.Error()}
		}
	}
	normalise.Settle(res, effect, f.delivered)
	m.ElapsedMS = finished.Sub(f.started).Milliseconds()
	return rejected
}

// feedback writes the observation and the advice (stage 5) from what the
// stages before found; note is what the state update left out.
func (p *Pipeline) feedback(f *flight, res *types.Result, rejected json.RawMessage, note string) {
	if f.execNote != "" {
		note = strings.TrimSpace(f.execNote + " " + note)
	}
	facts := &feedback.Facts{RetryAfter: f.wait, RuleNext: f.ruleNext, DataDepth: f.dataDepth, Answer: rejected, Note: note,
		Verified: res.Meta.Verified && !res.Meta.Replayed, // settled by this call's verify read
		Doubt:    f.doubt, Unrecorded: f.unrecorded}
	if fail := f.failure; fail != nil {
		facts.Status = fail.Status
		if res.Code() == fail.Code {
			// An answer that will be the same on a repeat: a status the
			// dependency does not use for passing trouble (a redirect,
			// 501), or one too large to take.
			facts.TooLarge = fail.Kind == execute.KindTooLarge
			facts.Permanent = facts.TooLarge || fail.Kind == execute.KindStatus && !fail.Transient
		}
	}
	if at := res.Meta.CompletedAt; at != nil {
		facts.CompletedAt = *at
	}
	if spec := f.spec; spec != nil {
		facts.Effect, facts.Dependency = spec.Effect, spec.Dependency
		facts.ReadTimeout, facts.MaxBytes = spec.Timeout.Read.D(), spec.MaxObservationBytes
		if spec.Verify != nil {
			facts.VerifyWith = spec.Verify.Lookup
		}
		if !res.OK && res.Meta.SideEffect == types.SideEffectUnknown && facts.VerifyWith == "" {
			facts.ReadTools = readToolsLike(f.cfg.tools, spec, &f.run.Principal)
		}
	}
	feedback.Annotate(res, facts)
}

// completedAt is when a replayed operation first completed.
func completedAt(op *types.Operation) time.Time {
	if op.CompletedAt.IsZero() {
		return op.UpdatedAt
	}
	return op.CompletedAt
}

// unrecorded is the answer of a call whose records the store did not
// take (it could not be reached, or did not answer in time), and those
// records, to keep in the outbox. A call whose effect may have happened
// answers unknown_outcome instead of its outcome, and its operation is
// recorded unknown, for a repeat to verify: the ledger could not say
// what happened when the repeat comes. Every other answer (a read, a
// refusal, a write that sent nothing, a replay) stands: it changed
// nothing the ledger must know first. The state update is left out.
func (p *Pipeline) unrecorded(f *flight, res *types.Result, finished time.Time) (*types.Result, *kept) {
	sideEffect := res.Meta.SideEffect
	if !res.Meta.Replayed && (sideEffect == types.SideEffectCommitted || sideEffect == types.SideEffectUnknown) {
		res = types.Fail(types.CodeUnknownOutcome, "toolgate could not record the outcome of this call: its database did not answer in time", types.Meta{})
		f.delivered = true
		if f.settled && f.opStatus != "" {
			f.opStatus = types.OpUnknown
		}
		f.unrecorded = true
		f.failure, f.execNote, f.doubt = nil, "", ""
		finished, _ = p.prepare(f, res)
	}
	_, c, err := p.row(f, res, finished, nil)
	if err != nil {
		p.log.Error("the records of an unrecorded call could not be built", "run", f.run.ID, "tool", f.call.Tool, "err", err)
		return res, nil
	}
	return res, &kept{c: c, key: f.key, fence: f.fence, uncertain: true}
}
