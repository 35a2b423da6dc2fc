package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/retry"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.31.0"
	"go.opentelemetry.io/otel/trace"
)

// execute is stages 2 and 3 proper: the tool's attempts under its breaker
// and retry policy, and what their outcome means for a write's operation.
func (p *Pipeline) execute(ctx context.Context, f *flight) *types.Result {
	req := f.request(f.spec, f.checked.Args)
	out := p.attempts(ctx, f.cfg, req)
	f.attempts, f.retries = out.attempts, out.retries
	if out.resp == nil {
		res := p.failed(f, out)
		return p.unsettled(ctx, f, res, out.resent)
	}
	f.settle(types.OpCompleted)
	f.dataDepth, f.execNote = out.resp.DataDepth, out.resp.Note
	if out.resent || f.resent {
		p.checkResent(ctx, f, out.resp.Data)
	}
	res := types.OK(out.resp.Data, types.Meta{})
	res.Content = out.resp.Content
	return res
}

// outcome is what the attempts of one tool produced.
type outcome struct {
	resp     *execute.Response
	fail     *execute.Failure
	open     *breaker.OpenError
	attempts int
	retries  int
	reason   string // why the retries stopped
	fenced   bool   // stopped before an attempt: this process lost its liveness
	resent   bool   // an attempt was sent again after one that may have acted
}

// request is what the attempts of one tool send, and what bounds them: the
// call's own tool (flight.request) or a lookup's read tool (lookup).
type request struct {
	attempt  execute.Attempt
	fence    *store.Fence // checked before each send: a write begun under it
	purpose  monitor.Purpose
	deadline time.Time // the retries stop here
}

// request is the call's own attempt of spec, under its operation key and
// its fence.
func (f *flight) request(spec *config.Tool, args map[string]any) *request {
	return &request{
		attempt: execute.Attempt{Tool: spec, Dependency: f.cfg.tools.Dependencies[spec.Dependency], Args: args,
			OperationKey: f.key, Canonical: f.checked.Canonical},
		fence: f.fence, deadline: f.deadline,
	}
}

// attempts runs r against its dependency: breaker, attempt, classify,
// decide, back off, again. It never re-sends a write whose outcome is
// unknown unless the dependency honours the operation key.
func (p *Pipeline) attempts(ctx context.Context, cfg *live, r *request) outcome {
	spec := r.attempt.Tool
	name := cfg.dependencyName(spec)
	var bset breaker.Settings
	var budgetCfg retry.BudgetSettings
	if dep := r.attempt.Dependency; dep != nil {
		bset, budgetCfg = breakerSettings(dep.Breaker), budgetSettings(dep.RetryBudget)
	}
	br := p.breakers.Get(name, bset)
	budget := p.budgets.Get(name, budgetCfg)
	budget.Enter()
	defer budget.Leave()
	var out outcome
	// A request toolgate cannot build is refused before the breaker is
	// asked: it says nothing about the dependency's health.
	if checker, ok := p.exec.(execute.RequestChecker); ok {
		if fail := checker.CheckRequest(&r.attempt); fail != nil {
			out.fail = fail
			return out
		}
	}
	// releaseRetry ends the retry in flight, if any: after its attempt, or
	// when the call gives it up.
	releaseRetry := func() {}
	defer func() { releaseRetry() }()
	for {
		if r.fence != nil && !p.fencer.Holds(*r.fence) {
			// Fencing, checked last before each send: others may take
			// this write over soon, and it must not reach the dependency
			// after they may have.
			out.fenced, out.reason = true, "toolgate lost its liveness in the shared database"
			return out
		}
		ticket, err := br.Allow()
		if err != nil {
			var open *breaker.OpenError
			if errors.As(err, &open) {
				out.open = open
			}
			out.reason = "circuit open"
			return out
		}
		out.attempts++
		resp, fail := p.send(ctx, br, ticket, spec, r.purpose, out.attempts, &r.attempt)
		releaseRetry()
		if fail == nil {
			out.resp, out.fail = resp, nil
			return out
		}
		out.fail = fail
		wait, again, reason := p.again(r, out)
		if !again {
			out.reason = reason
			return out
		}
		release, ok := budget.TryRetry()
		if !ok {
			out.reason = retry.ReasonBudget
			return out
		}
		releaseRetry = release
		out.resent = out.resent || fail.Delivered
		if err := p.clock.Sleep(ctx, wait); err != nil {
			out.reason = "call deadline reached"
			return out
		}
		out.retries++
	}
}

// dependencyName is the name spec's breaker and retry budget are kept by:
// its dependency's, or "tool:" and its own for a tool without one.
func (l *live) dependencyName(spec *config.Tool) string {
	if spec.Dependency != "" {
		return spec.Dependency
	}
	if name, ok := l.toolDeps[spec.Name]; ok {
		return name
	}
	return "tool:" + spec.Name
}

// send makes one attempt under br's ticket and gives the ticket back in a
// defer: an executor that panics counts as a failure of the dependency (as
// a Go tool's panic does) and never leaves a half-open breaker waiting for
// a probe that will not end.
func (p *Pipeline) send(ctx context.Context, br *breaker.Breaker, ticket breaker.Ticket, spec *config.Tool, purpose monitor.Purpose, n int, a *execute.Attempt) (resp *execute.Response, fail *execute.Failure) {
	health := breaker.Failure // unless the attempt returns
	defer func() { br.Done(ticket, health) }()
	actx, span := p.startAttempt(ctx, spec, purpose, n)
	resp, fail = p.exec.Do(actx, a)
	endAttempt(span, resp, fail)
	p.recordAttempt(spec.Name, purpose)
	health = breaker.Success
	if fail != nil {
		health = breakerOutcome(fail)
	}
	return resp, fail
}

// breakerOutcome is what an attempt's failure counts for in its
// dependency's breaker: a failure when it speaks against the dependency's
// health, nothing otherwise (the caller's cancellation, a 4xx).
func breakerOutcome(f *execute.Failure) breaker.Outcome {
	if f.Unhealthy() {
		return breaker.Failure
	}
	return breaker.Ignore
}

// again is stage 3 for one failed attempt: whether it is tried again, and
// after what wait, or why not.
func (p *Pipeline) again(r *request, out outcome) (wait time.Duration, again bool, reason string) {
	fail, spec := out.fail, r.attempt.Tool
	if fail.Kind == execute.KindCanceled {
		return 0, false, "call deadline reached"
	}
	remaining := time.Duration(0)
	if !r.deadline.IsZero() {
		remaining = r.deadline.Sub(p.clock.Now())
		if remaining <= 0 {
			return 0, false, "call deadline reached"
		}
	}
	d := retry.Decide(retry.Input{
		Policy: retryPolicy(spec.Retry), Effect: spec.Effect, KeyHonoured: spec.Idempotency.Header != "" && r.attempt.OperationKey != "",
		Failure:  retryFailure(fail),
		Attempts: out.attempts, Remaining: remaining, AttemptTimeout: spec.Timeout.Connect.D() + spec.Timeout.Read.D(), Rand: p.rand.Float64(),
	})
	return d.Wait, d.Retry, d.Reason
}

// retryFailure is what package retry needs to know about an attempt's
// failure.
func retryFailure(f *execute.Failure) retry.Failure {
	return retry.Failure{Transient: f.Transient, Delivered: f.Delivered, Status: f.Status, RetryAfter: f.RetryAfter}
}

// failed turns the last failure of a call's attempts into its envelope.
func (p *Pipeline) failed(f *flight, out outcome) *types.Result {
	if out.fail == nil {
		if out.fenced {
			return storeUnavailable("toolgate lost its connection to the shared database just before sending this write, so it sent nothing")
		}
		if out.open != nil {
			f.wait = out.open.RetryIn
			return types.Fail(types.CodeCircuitOpen, fmt.Sprintf("%s has failed %d times in a row and is temporarily unavailable; toolgate sent nothing", out.open.Dependency, out.open.Failures), types.Meta{})
		}
		return types.Fail(types.CodeInternalError, "no attempt was made", types.Meta{})
	}
	fail := out.fail
	f.failure = fail
	f.delivered = fail.Delivered
	f.wait = fail.RetryAfter
	code := fail.Code
	msg := fail.Message
	if out.attempts > 1 || out.reason != "" {
		msg = fmt.Sprintf("%s (%d %s; stopped: %s)", msg, out.attempts, pluralWord(out.attempts, "attempt"), out.reason)
	}
	switch {
	case fail.Kind == execute.KindCanceled:
		code = types.CodeTimeoutUnknownOutcome
		if f.spec.Effect.SafeToRepeat() || !fail.Delivered {
			code = types.CodeTimeout
		}
		msg = fmt.Sprintf("%s did not finish within the call's deadline of %s", f.spec.Name, f.spec.Timeout.Total)
	case (code == types.CodeTimeoutUnknownOutcome) && f.spec.Effect.SafeToRepeat():
		code = types.CodeTimeout
	}
	res := types.Fail(code, msg, types.Meta{})
	if out.open != nil && f.wait == 0 {
		f.wait = out.open.RetryIn
	}
	return res
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// lookup runs a read tool on the pipeline's behalf (ownership and verify
// reads, as validate prepared them): breaker and retries as for any read,
// no ledger, no row of its own. Its retries stop at deadline, the calling
// tool's; ctx must end there too.
func (p *Pipeline) lookup(ctx context.Context, cfg *live, deadline time.Time, purpose monitor.Purpose, l *validate.Lookup) (json.RawMessage, *execute.Failure) {
	spec := l.Tool.Spec
	r := &request{
		attempt: execute.Attempt{Tool: spec, Dependency: cfg.tools.Dependencies[spec.Dependency], Args: l.Args},
		purpose: purpose, deadline: deadline,
	}
	ctx, span := p.startLookup(ctx, purpose, spec.Name)
	out := p.attempts(ctx, cfg, r)
	endLookup(span, out)
	if out.resp != nil {
		return out.resp.Data, nil
	}
	if out.fail == nil && out.open != nil {
		return nil, &execute.Failure{Kind: execute.KindConnectFailed, Code: types.CodeCircuitOpen, Message: out.open.Error(), Transient: true}
	}
	return nil, out.fail
}

// reader makes a checked call's reads (validate.Reader) as lookups under
// the call's configuration, within deadline; purpose names them in spans
// and rows.
type reader struct {
	p        *Pipeline
	cfg      *live
	deadline time.Time
	purpose  monitor.Purpose
}

// Read sends the lookup l. A read that was cancelled, or that ctx's
// deadline ended, timed out.
func (r reader) Read(ctx context.Context, l *validate.Lookup) (json.RawMessage, *validate.ReadError) {
	data, fail := r.p.lookup(ctx, r.cfg, r.deadline, r.purpose, l)
	if fail == nil {
		return data, nil
	}
	return nil, &validate.ReadError{Code: fail.Code, Message: fail.Message, TimedOut: fail.Kind == execute.KindCanceled || ctx.Err() != nil}
}

// PurposeKey is the attribute of attempt and lookup spans saying why the
// request was sent: call, owner or verify (monitor.Purpose).
const PurposeKey = attribute.Key("toolgate.purpose")

// startLookup opens the span of an ownership or verify lookup, the parent
// of the lookup's attempts: "owner_lookup {tool}" or "verify_lookup {tool}".
func (p *Pipeline) startLookup(ctx context.Context, purpose monitor.Purpose, tool string) (context.Context, trace.Span) {
	tr := p.activeTracer()
	if tr == nil {
		return ctx, noSpan{}
	}
	ctx, span := tr.Start(ctx, string(purpose)+"_lookup "+tool, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(PurposeKey.String(string(purpose)), semconv.GenAIToolName(tool))
	}
	return ctx, span
}

// endLookup records how the lookup's attempts ended.
func endLookup(span trace.Span, out outcome) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("toolgate.attempts", out.attempts))
		switch {
		case out.fail != nil:
			span.SetAttributes(semconv.ErrorTypeKey.String(string(out.fail.Code)))
			span.SetStatus(codes.Error, string(out.fail.Code))
		case out.open != nil:
			span.SetAttributes(semconv.ErrorTypeKey.String(string(types.CodeCircuitOpen)))
			span.SetStatus(codes.Error, string(types.CodeCircuitOpen))
		}
	}
	span.End()
}

// startAttempt opens the span of one attempt, a CLIENT child of the call's
// (or the lookup's) span. It is named "attempt {tool}" here; the HTTP
// executor renames it after the method and adds the HTTP client attributes
// once the request is built.
func (p *Pipeline) startAttempt(ctx context.Context, spec *config.Tool, purpose monitor.Purpose, n int) (context.Context, trace.Span) {
	tr := p.activeTracer()
	if tr == nil {
		return ctx, noSpan{}
	}
	ctx, span := tr.Start(ctx, "attempt", trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		if purpose == "" {
			purpose = monitor.PurposeCall
		}
		span.SetName("attempt " + spec.Name)
		span.SetAttributes(attribute.Int("toolgate.attempt", n), semconv.GenAIToolName(spec.Name), PurposeKey.String(string(purpose)))
	}
	return ctx, span
}

func endAttempt(span trace.Span, resp *execute.Response, fail *execute.Failure) {
	switch {
	case !span.IsRecording():
	case fail != nil:
		span.SetAttributes(semconv.ErrorTypeKey.String(fail.Kind.String()), attribute.Bool("toolgate.delivered", fail.Delivered))
		if fail.Status != 0 {
			span.SetAttributes(semconv.HTTPResponseStatusCode(fail.Status))
		}
		span.SetStatus(codes.Error, fail.Kind.String())
	case resp != nil && resp.Status != 0:
		span.SetAttributes(semconv.HTTPResponseStatusCode(resp.Status))
	}
	span.End()
}

// recordAttempt tells the sinks that count attempts (monitor.AttemptSink)
// of one attempt sent.
func (p *Pipeline) recordAttempt(tool string, purpose monitor.Purpose) {
	if purpose == "" {
		purpose = monitor.PurposeCall
	}
	for _, s := range p.sinks {
		if as, ok := s.(monitor.AttemptSink); ok {
			as.RecordAttempt(tool, purpose)
		}
	}
}
