package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/toolgate/toolgate/envelope"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/observe"
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
func (p *Pipeline) finish(ctx context.Context, f *flight, res *types.Result) *types.Result {
	err := p.record(ctx, f, res)
	if f.admission == stepInCommit && errors.Is(err, store.ErrStepBudget) {
		f.admission = notAdmitted
		res = p.exhausted(f)
		err = p.record(ctx, f, res)
	}
	if err != nil {
		p.log.Error("commit failed", "run", f.run.ID, "tool", f.call.Tool, "step", f.step, "err", err)
		res = unrecorded(f, res)
	}
	p.releaseSlot(ctx, f, err == nil)
	if f.key != "" && f.settled {
		p.waiters.notify(f.key)
	}
	if level := levelFor(res); p.log.Enabled(ctx, level) {
		p.log.LogAttrs(ctx, level, "call", slogAttrs(res)...)
	}
	return res
}

// record runs stages 4 to 7 on res, in list order. The state update is
// computed (pure) before the feedback, against the state the call read, so
// that the observation can say when it is left out; the commit applies it
// to the newest state.
func (p *Pipeline) record(ctx context.Context, f *flight, res *types.Result) error {
	finished := p.clock.Now()
	// 4 normalise: one result shape, whatever happened.
	rejected := p.normalise(f, res, finished)
	// 7, computed: what the commit will change in the run's state and
	// the ledger.
	update := p.stateUpdate(f, res)
	// 5 feedback: what happened, what to do next, what was left out.
	p.feedback(f, res, rejected, update.note)
	// 6 monitor and 7 state: the execution row, the state and the
	// operation's settlement in one transaction.
	return p.commit(ctx, f, res, finished, update)
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
	envelope.Settle(res, effect, f.delivered)
	m.ElapsedMS = finished.Sub(f.started).Milliseconds()
	return rejected
}

// feedback writes the observation and the advice (stage 5) from what the
// stages before found; note is what the state update left out.
func (p *Pipeline) feedback(f *flight, res *types.Result, rejected json.RawMessage, note string) {
	if f.execNote != "" {
		note = strings.TrimSpace(f.execNote + " " + note)
	}
	facts := &observe.Facts{RetryAfter: f.wait, RuleNext: f.ruleNext, DataDepth: f.dataDepth, Answer: rejected, Note: note,
		Verified: res.Meta.Verified && !res.Meta.Replayed, // settled by this call's verify read
		Doubt:    f.doubt}
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
	observe.Annotate(res, facts)
}

// completedAt is when a replayed operation first completed.
func completedAt(op *types.Operation) time.Time {
	if op.CompletedAt.IsZero() {
		return op.UpdatedAt
	}
	return op.CompletedAt
}

// unrecorded is the answer of a call whose records could not be committed.
func unrecorded(f *flight, res *types.Result) *types.Result {
	failed := envelope.Fail(types.CodeInternalError, "toolgate could not record the outcome of this call.", res.Meta)
	failed.Meta.Next = types.NextEscalate
	if f.attempts > 0 && f.spec != nil && f.spec.Effect == types.EffectWrite {
		failed.Meta.SideEffect = types.SideEffectUnknown
		failed.Observation = "toolgate could not record the outcome of this call (internal_error). The action MAY have been carried out; do not repeat it as a new action. Repeating this exact call is safe: toolgate will check before sending anything. If that fails too, escalate."
		failed.Meta.Next = types.NextVerify
	} else {
		failed.Meta.SideEffect = types.SideEffectNone
		failed.Observation = "toolgate could not record this call (internal_error); nothing was done. Try again shortly, or escalate if it keeps happening."
	}
	return failed
}
