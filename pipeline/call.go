package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Call runs one tool call through the seven stages and returns its result.
// The error is non-nil only when there is no run to record the call in
// (ErrUnknownRun) or the store cannot be read; every other outcome, tool
// failures included, is a result with ok false.
//
// ctx governs admission only: once a call is admitted it runs to its own
// deadline and records its outcome even if ctx is cancelled, so an impatient
// client never leaves an unknown outcome behind.
func (p *Pipeline) Call(ctx context.Context, call *types.Call) (*types.Result, error) {
	return p.call(ctx, call, "")
}

// call is Call; a non-empty expectKey makes it a settlement of that existing
// operation (Reconcile): a call that derives another key, or would begin a
// new operation, sends nothing.
func (p *Pipeline) call(ctx context.Context, call *types.Call, expectKey string) (*types.Result, error) {
	run, err := p.store.GetRun(ctx, call.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRun, call.RunID)
	}
	if err != nil {
		return nil, err
	}
	return p.callRun(ctx, call, run, expectKey)
}

// CallRun is Call for a caller that has just read the run (the server,
// which checks the run's owner first): it saves reading it again. run must
// be the store's current copy of call.RunID; a stale one costs a retry of
// the state commit, never a wrong update.
func (p *Pipeline) CallRun(ctx context.Context, call *types.Call, run *types.Run) (*types.Result, error) {
	if run == nil || run.ID != call.RunID {
		return p.call(ctx, call, "")
	}
	return p.callRun(ctx, call, run, "")
}

// callRun is the whole call: stages 1 to 3 (run), then 4 to 7 (finish).
func (p *Pipeline) callRun(ctx context.Context, call *types.Call, run *types.Run, expectKey string) (*types.Result, error) {
	if call.CallID == "" {
		call.CallID = NewCallID()
	}
	f := &flight{call: call, run: run, cfg: p.cur.Load(), started: p.clock.Now(), expectKey: expectKey}
	// From here on the call is recorded whatever happens, even if the client
	// goes away.
	caller := ctx
	ctx = context.WithoutCancel(ctx)
	ctx, span := p.startCall(ctx, caller, call, f.cfg.tools)
	f.traceID = span.SpanContext().TraceID()
	res := p.finish(ctx, f, p.run(ctx, f))
	endCall(span, res)
	return res, nil
}

// run is stages 1 to 3 of one call: validate, admit, execute with retries.
// It returns the envelope of whatever happened, before normalisation,
// feedback and recording (finish).
func (p *Pipeline) run(ctx context.Context, f *flight) (res *types.Result) {
	defer p.recoverRun(f, &res)
	if f.run.MaxSteps > 0 && f.run.Step >= f.run.MaxSteps {
		return p.exhausted(f)
	}

	// 1 validate: the pure checks, cheapest first, then approval and
	// ownership (I/O) last.
	refusal, res := p.judge(ctx, f)
	if res != nil {
		return res
	}
	// Admission: the call takes its step (a refusal too), decided once.
	f.admission = p.admissionFor(f, refusal != nil)
	if res := p.takeStepFirst(ctx, f); res != nil {
		return res
	}
	if refusal != nil {
		return p.refused(f, refusal)
	}
	// The call now runs to its own deadline.
	f.deadline = f.started.Add(f.spec.Timeout.Total.D())
	timeout := f.spec.Timeout.Total.D()
	if f.admission == limited {
		// Admitted under its limits first: a wait for the run's state
		// writer slot may move the deadline (see stateslot.go).
		if res := p.admitLimited(ctx, f); res != nil {
			return res
		}
		timeout = f.deadline.Sub(p.clock.Now())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// 2 execute: a write's intent is durable before its first attempt.
	if res := p.beginWrite(ctx, f); res != nil {
		return res
	}
	// 2-3 the attempts, retried only when transient and safe.
	return p.execute(ctx, f)
}

// recoverRun answers a panic in stages 1 to 3 as a result, so that the
// call is still recorded.
func (p *Pipeline) recoverRun(f *flight, res **types.Result) {
	if v := recover(); v != nil {
		p.log.Error("panic in pipeline", "tool", f.call.Tool, "run", f.call.RunID, "panic", fmt.Sprint(v))
		*res = types.Panic(v, types.Meta{})
		f.delivered = f.attempts > 0
	}
}

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

// execute is stages 2 and 3 proper: the tool's attempts under its breaker
// and retry policy, and what their outcome means for a write's operation.
func (p *Pipeline) execute(ctx context.Context, f *flight) *types.Result {
	out := p.attempts(ctx, f.cfg, f.request(f.spec, f.checked.Args))
	f.attempts, f.retries = out.attempts, out.retries
	if out.resp != nil {
		f.settle(types.OpCompleted)
		f.dataDepth, f.execNote = out.resp.DataDepth, out.resp.Note
		if out.resent || f.resent {
			p.checkResent(ctx, f, out.resp.Data)
		}
		res := types.OK(out.resp.Data, types.Meta{})
		res.Content = out.resp.Content
		return res
	}
	res := p.failed(f, out)
	if res.Code() == types.CodeTimeoutUnknownOutcome || (f.delivered && f.spec.Effect == types.EffectWrite && res.Code() == types.CodeUpstreamError) {
		return p.unknownOutcome(ctx, f, res)
	}
	if f.spec.Effect == types.EffectWrite && (out.resent || f.resent) {
		return p.stillUnknown(ctx, f, res)
	}
	if f.spec.Effect == types.EffectWrite {
		// Nothing happened: forget the intent so the operation may run again.
		f.settle("")
	}
	return res
}

// stillUnknown answers a write whose last attempt sent nothing (a refused
// connection, an open breaker) after an earlier attempt that may have
// acted: one of this call's, or the one that left the operation unknown
// before this call re-sent it under its key. Nothing proves the operation
// did not happen, so it stays unknown (it is never forgotten, which would
// let it run again and leave an effect no ledger knows).
func (p *Pipeline) stillUnknown(ctx context.Context, f *flight, res *types.Result) *types.Result {
	f.delivered = true
	msg := fmt.Sprintf("an earlier attempt of operation %s may have been carried out, and sending it again failed before it reached %s (%s: %s)",
		f.key, f.spec.Dependency, res.Code(), res.Error.Message)
	return p.unknownOutcome(ctx, f, types.Fail(types.CodeUnknownOutcome, msg, types.Meta{}))
}
