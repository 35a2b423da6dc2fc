package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/envelope"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/expr"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// flight is the working state of one call on its way through the stages.
type flight struct {
	call     *types.Call
	cfg      *live // the configuration the call was admitted under, to its end
	run      *types.Run
	state    map[string]any
	started  time.Time
	deadline time.Time // on the pipeline's clock
	checked  *validate.Checked
	spec     *config.Tool
	dep      *config.Dependency
	depName  string
	key      string
	step     int64
	fence    *store.Fence // the liveness a write was begun under

	attempts   int
	retries    int
	delivered  bool // the last failure may have reached the dependency
	status     int
	wait       time.Duration // advice: come back after
	verified   bool
	replayOf   *types.Operation
	opUpdate   *store.OperationUpdate
	ruleNext   types.Next
	traceID    trace.TraceID
	expectKey  string // Reconcile: the operation this call may only settle
	takeStep   bool   // the step is taken by the commit of the row
	approvalID string
	purpose    monitor.Purpose // why its attempts are sent; "" is monitor.PurposeCall
	holder     string          // the run's state-writer slot, held until the commit
	quota      *store.QuotaDenial
	failure    *execute.Failure // the last attempt's, when the call failed on it
	dataDepth  int              // an answer nested too deep, carried as text
}

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

func (p *Pipeline) callRun(ctx context.Context, call *types.Call, run *types.Run, expectKey string) (*types.Result, error) {
	if call.CallID == "" {
		call.CallID = NewCallID()
	}
	f := &flight{call: call, run: run, cfg: p.cur.Load(), started: p.clock.Now(), expectKey: expectKey}
	// From here on the call is recorded whatever happens, even if the client
	// goes away.
	ctx = context.WithoutCancel(ctx)
	ctx, span := p.startCall(ctx, call, f.cfg.tools)
	f.traceID = span.SpanContext().TraceID()
	res := p.finish(ctx, f, p.run(ctx, f))
	endCall(span, res)
	return res, nil
}

// run is the path of one admitted call: it returns the envelope of whatever
// happened, before observation and recording.
func (p *Pipeline) run(ctx context.Context, f *flight) (res *types.Result) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("panic in pipeline", "tool", f.call.Tool, "run", f.call.RunID, "panic", fmt.Sprint(v))
			res = envelope.Panic(v, types.Meta{})
			f.delivered = f.attempts > 0
		}
	}()
	if f.run.MaxSteps > 0 && f.run.Step >= f.run.MaxSteps {
		return p.exhausted(f)
	}

	// 1 validate: the pure checks, cheapest first, then ownership (I/O) last.
	refusal, res := p.judge(ctx, f)
	if res != nil {
		return res
	}
	// A call that reads or changes the run's state, or uses a quota, is
	// admitted by the store's Limiter (see stateslot.go): its step, the
	// run's state-writer slot, its operation and its quota reservations in
	// one durable write.
	limiter := p.limiter
	limited := limiter != nil && refusal == nil && f.expectKey == "" && f.checked.Tool.Limited()
	// Admission: the call takes its step. A write that passed validation
	// takes it in the same durable write that begins its operation, where
	// the store can (store.Admitter). A call that begins no operation (a
	// read, a refusal) takes it in the commit of its row, its one write
	// (store.Commit.TakeStep); a read that then finds the budget spent is
	// answered step_budget_exhausted (its request changed nothing).
	admitter, merged := p.admitter, p.admitter != nil
	merged = merged && !limited && refusal == nil && f.spec.Effect == types.EffectWrite && (f.expectKey == "" || f.expectKey == f.key)
	f.takeStep = !merged && !limited && f.expectKey == "" && (refusal != nil || f.spec.Effect != types.EffectWrite)
	if !merged && !f.takeStep && !limited {
		if step, err := p.store.AdmitStep(ctx, f.run.ID); err != nil {
			return p.admissionFailed(f, err)
		} else {
			f.step = step
		}
	}
	if refusal != nil {
		return p.refused(f, refusal)
	}

	// The call now runs to its own deadline.
	f.deadline = f.started.Add(f.spec.Timeout.Total.D())
	timeout := f.spec.Timeout.Total.D()
	if limited {
		// Admitted under its limits first: a wait for the run's state
		// writer slot may move the deadline (see stateslot.go).
		if res := p.admitLimited(ctx, f, limiter); res != nil {
			return res
		}
		timeout = f.deadline.Sub(p.clock.Now())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if f.expectKey != "" && f.expectKey != f.key {
		return envelope.Fail(types.CodeUnknownOutcome, fmt.Sprintf("the operation key derived today (%s) is not the recorded one (%s): the tool's idempotency.key changed. Nothing was sent; settle this operation by hand", f.key, f.expectKey), types.Meta{})
	}
	// 2 execute: a write's intent is durable before its first attempt.
	if !limited && f.spec.Effect == types.EffectWrite {
		if !merged {
			admitter = nil
		}
		if res := p.begin(ctx, f, admitter); res != nil {
			return res
		}
	}
	// 2-3 attempts, with retries only when transient and safe.
	out := p.attempt(ctx, f, f.spec, f.checked.Args)
	f.attempts, f.retries = out.attempts, out.retries
	if out.resp != nil {
		f.settle(types.OpCompleted)
		f.dataDepth = out.resp.DataDepth
		return envelope.OK(out.resp.Data, types.Meta{})
	}
	res = p.failed(f, out)
	if res.Code() == types.CodeTimeoutUnknownOutcome || (f.delivered && f.spec.Effect == types.EffectWrite && res.Code() == types.CodeUpstreamError) {
		return p.unknownOutcome(ctx, f, res)
	}
	if f.spec.Effect == types.EffectWrite {
		// Nothing happened: forget the intent so the operation may run again.
		f.settle("")
	}
	return res
}

// judge runs stage 1 against f.run: the pure checks, cheapest first, then
// approvals and ownership (I/O) last. It answers the refusal, if any, or a
// result when the call cannot be judged at all. The state is decoded only
// for tools whose expressions can see it.
func (p *Pipeline) judge(ctx context.Context, f *flight) (*validate.Refusal, *types.Result) {
	f.state = nil
	if c, ok := f.cfg.validator.Tool(f.call.Tool); ok && (len(c.Rules) > 0 || len(c.StateExprs) > 0 || c.OwnerArgs != nil || c.VerifyArgs != nil || len(c.Quotas) > 0) {
		st, err := state.Decode(f.run.State)
		if err != nil {
			return nil, envelope.Fail(types.CodeInternalError, "the run's state could not be read; escalate.", types.Meta{})
		}
		f.state = st
	}
	checked, refusal := f.cfg.validator.Check(&validate.Input{
		Tool: f.call.Tool, Args: f.call.Args, Principal: &f.run.Principal,
		State: f.state, RunID: f.run.PublicID(), CallID: f.call.CallID,
		Key: f.run.Owner,
	})
	if checked != nil {
		f.bind(checked, f.cfg.tools)
	}
	if refusal != nil && refusal.Approval && checked != nil {
		refusal = p.approve(ctx, f, refusal)
	}
	if refusal == nil && f.spec.Owner != nil {
		refusal = p.checkOwner(ctx, f)
	}
	return refusal, nil
}

// bind records what validation resolved: the tool, its dependency, the
// operation key.
func (f *flight) bind(c *validate.Checked, cfg *config.Config) {
	f.checked = c
	f.spec = c.Tool.Spec
	f.depName = f.spec.Dependency
	if f.depName == "" {
		f.depName = "tool:" + f.spec.Name
	}
	f.dep = cfg.Dependencies[f.spec.Dependency]
	if f.spec.Effect != types.EffectRead {
		f.key = f.run.ScopeOperationKey(operationKey(c, f.run.ID))
	}
}

// operationKey derives the identity of a write from the operation, never the
// attempt: the tool's template, or a hash of (run, tool, canonical args).
// bind scopes it to the run's owner (types.Run.ScopeOperationKey).
func operationKey(c *validate.Checked, runID string) string {
	if c.Tool.KeyTemplate != nil {
		if k, err := c.Tool.KeyTemplate.Render(c.Vars); err == nil {
			return k
		}
	}
	id := make([]byte, 0, len(runID)+len(c.Tool.Name)+len(c.Canonical)+2)
	id = append(append(append(append(append(id, runID...), 0), c.Tool.Name...), 0), c.Canonical...)
	h := expr.Hash(id)
	return "op:" + c.Tool.Name + ":" + h
}

func (f *flight) settle(status types.OpStatus) {
	if f.spec.Effect != types.EffectWrite || f.key == "" {
		return
	}
	f.opUpdate = &store.OperationUpdate{Key: f.key, Status: status}
}

// admissionFailed answers a call the store could not admit.
func (p *Pipeline) admissionFailed(f *flight, err error) *types.Result {
	if errors.Is(err, store.ErrStepBudget) {
		return p.exhausted(f)
	}
	p.log.Error("admission failed", "run", f.run.ID, "tool", f.call.Tool, "err", err)
	return envelope.Fail(types.CodeInternalError, "toolgate could not record this call; nothing was done. Try again shortly or escalate.", types.Meta{})
}

func (p *Pipeline) exhausted(f *flight) *types.Result {
	return envelope.Fail(types.CodeStepBudgetExhausted,
		fmt.Sprintf("This run has used all of its %d steps. Stop and report what was done so far.", f.run.MaxSteps), types.Meta{})
}

func (p *Pipeline) refused(f *flight, r *validate.Refusal) *types.Result {
	if r.Rule >= 0 {
		f.ruleNext = ruleNext(r)
	}
	return envelope.Fail(r.Code, r.Message, types.Meta{})
}

func ruleNext(r *validate.Refusal) types.Next {
	switch {
	case r.Code == types.CodeApprovalDenied:
		return types.NextStop
	case r.Approval:
		return types.NextWait
	}
	// A deny rule's next: (escalate by default), so that meta.next agrees
	// with what the rule's message tells the model.
	return r.RuleNext
}

// keyHonoured says the dependency dedupes this tool's writes by the
// operation key it is sent.
func (f *flight) keyHonoured() bool { return f.spec.Idempotency.Header != "" && f.key != "" }
