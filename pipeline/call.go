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
	f := &flight{call: call, run: run, keyScope: run.KeyScope(), cfg: p.cur.Load(), started: p.clock.Now(), expectKey: expectKey}
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

	// 1 validate: the pure checks, cheapest first, then the step budget,
	// then approval and ownership (I/O) last.
	refusal, res := p.judge(ctx, f)
	if res != nil {
		return res
	}
	// Admission: the call takes its step (a refusal too), decided once;
	// then it runs to its own deadline.
	timeout, res := p.admit(ctx, f, refusal)
	if res != nil {
		return res
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
