package pipeline

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/types"
)

// tracerName is the instrumentation scope of toolgate's spans.
const tracerName = "github.com/toolgate/toolgate"

// globalTracer follows the global OpenTelemetry provider: a no-op until one
// is installed, the installed provider's tracer after.
var globalTracer = otel.Tracer(tracerName)

// unsetProvider is the global provider as the otel package starts it (a
// delegate that records nothing), or nil if something installed a real
// provider before this package was initialised.
var unsetProvider = func() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if fmt.Sprintf("%T", tp) == "*global.tracerProvider" {
		return tp
	}
	return nil
}()

// activeTracer returns the tracer for one call, or nil when no span can be
// recorded: the tracer is a no-op, or it follows a global provider that is
// still unset. Spans are then not made at all: a no-op span still costs a
// dozen allocations per call.
func (p *Pipeline) activeTracer() trace.Tracer {
	switch {
	case p.noTrace:
		return nil
	case p.tracer != nil:
		return p.tracer
	case unsetProvider != nil && otel.GetTracerProvider() == unsetProvider:
		return nil
	}
	return globalTracer
}

// startCall opens the call's span, named and attributed after the
// OpenTelemetry GenAI semantic conventions for tool execution. Without an
// active tracer the span is a no-op that carries the caller's trace ID (if
// any) for the row.
func (p *Pipeline) startCall(ctx context.Context, call *types.Call) (context.Context, trace.Span) {
	tr := p.activeTracer()
	if tr == nil {
		return ctx, noSpan{sc: trace.SpanContextFromContext(ctx)}
	}
	ctx, span := tr.Start(ctx, "execute_tool "+call.Tool, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", call.Tool),
			attribute.String("gen_ai.tool.call.id", call.CallID),
			attribute.String("toolgate.run.id", call.RunID),
		)
	}
	return ctx, span
}

// endCall records the outcome on the call's span and ends it.
func endCall(span trace.Span, res *types.Result) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(
		attribute.Int64("toolgate.step", res.Meta.Step),
		attribute.String("toolgate.outcome", string(res.Code())),
		attribute.Int("toolgate.attempts", res.Meta.Attempts),
		attribute.String("toolgate.side_effect", string(res.Meta.SideEffect)),
		attribute.Bool("toolgate.replayed", res.Meta.Replayed),
	)
	if res.Meta.IdempotencyKey != "" {
		span.SetAttributes(attribute.String("toolgate.operation_key", res.Meta.IdempotencyKey))
	}
	if !res.OK {
		span.SetAttributes(attribute.String("error.type", string(res.Code())))
		span.SetStatus(codes.Error, string(res.Code()))
	}
	span.End()
}

// startAttempt opens the span of one attempt, a child of the call's span.
func (p *Pipeline) startAttempt(ctx context.Context, tool string, n int) (context.Context, trace.Span) {
	tr := p.activeTracer()
	if tr == nil {
		return ctx, noSpan{}
	}
	ctx, span := tr.Start(ctx, "attempt", trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetName("attempt " + strconv.Itoa(n) + " " + tool)
		span.SetAttributes(attribute.Int("toolgate.attempt", n), attribute.String("gen_ai.tool.name", tool))
	}
	return ctx, span
}

func endAttempt(span trace.Span, resp *execute.Response, fail *execute.Failure) {
	switch {
	case !span.IsRecording():
	case fail != nil:
		span.SetAttributes(attribute.String("error.type", fail.Kind.String()), attribute.Bool("toolgate.delivered", fail.Delivered))
		if fail.Status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", fail.Status))
		}
		span.SetStatus(codes.Error, fail.Kind.String())
	case resp != nil && resp.Status != 0:
		span.SetAttributes(attribute.Int("http.response.status_code", resp.Status))
	}
	span.End()
}

// noSpan is the span of a call or attempt when nothing is traced: it
// records nothing and ends nothing, and reports the caller's span context
// so the row keeps the caller's trace ID.
type noSpan struct {
	noop.Span
	sc trace.SpanContext
}

// SpanContext is the caller's span context, if any.
func (s noSpan) SpanContext() trace.SpanContext { return s.sc }
