package pipeline

import (
	"context"
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/buildinfo"
	"github.com/toolgate/toolgate/types"
)

// tracerName is the instrumentation scope of toolgate's spans.
const tracerName = "github.com/toolgate/toolgate"

// globalTracer follows the global OpenTelemetry provider: a no-op until one
// is installed, the installed provider's tracer after.
var globalTracer = otel.Tracer(tracerName, trace.WithInstrumentationVersion(buildinfo.Version()))

// unsetProvider is the global provider as this package found it at start-up
// (otel's delegating default, before any SetTracerProvider), or nil if that
// provider already made spans of its own.
var unsetProvider = silentAtStart(otel.GetTracerProvider())

// silentAtStart is tp if it makes no spans of its own and can be compared
// with the provider of each call, else nil.
func silentAtStart(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil || !reflect.TypeOf(tp).Comparable() || !makesNoSpans(tp.Tracer(tracerName)) {
		return nil
	}
	return tp
}

// makesNoSpans says tr makes no spans of its own: a root span it starts is
// not recording and has no trace ID. That is the unset global provider and
// otel's noop provider; a real SDK gives every span an ID, sampled or not.
// The probe is never ended, so a real provider exports nothing for it.
func makesNoSpans(tr trace.Tracer) bool {
	_, span := tr.Start(context.Background(), "toolgate.probe")
	return !span.IsRecording() && !span.SpanContext().IsValid()
}

// silentGlobal says the global provider tp records nothing: it is still the
// unset default, or otel's noop provider.
func silentGlobal(tp trace.TracerProvider) bool {
	if unsetProvider != nil && tp == unsetProvider {
		return true
	}
	_, isNoop := tp.(noop.TracerProvider)
	return isNoop
}

// activeTracer returns the tracer for one call, or nil when no span can be
// recorded: the tracer is a no-op, or it follows a global provider that
// records nothing. Spans are then not made at all: a no-op span still costs
// a dozen allocations per call.
func (p *Pipeline) activeTracer() trace.Tracer {
	switch {
	case p.noTrace:
		return nil
	case p.tracer != nil:
		return p.tracer
	case silentGlobal(otel.GetTracerProvider()):
		return nil
	}
	return globalTracer
}

// ToolType is the gen_ai.tool.type of every toolgate tool: the model asks
// for a function call and toolgate, on the agent's side, executes it.
const ToolType = "function"

// startCall opens the call's span, named and attributed after the
// OpenTelemetry GenAI semantic conventions for tool execution. Without an
// active tracer the span is a no-op that carries the caller's trace ID (if
// any) for the row; caller is the call's context before it was detached.
func (p *Pipeline) startCall(ctx, caller context.Context, call *types.Call, tools *config.Config) (context.Context, trace.Span) {
	tr := p.activeTracer()
	if tr == nil {
		// The caller's own context holds the same values as ctx (ctx only
		// drops its cancellation) and reads them without an allocation.
		sc := trace.SpanContextFromContext(caller)
		if sc.Equal(trace.SpanContext{}) {
			return ctx, noSpan{} // a zero value boxes without allocating
		}
		return ctx, noSpan{sc: sc}
	}
	ctx, span := tr.Start(ctx, "execute_tool "+call.Tool, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(call.Tool),
			semconv.GenAIToolCallID(call.CallID),
			semconv.GenAIToolType(ToolType),
			attribute.String("toolgate.run.id", call.RunID),
		)
		if spec := tools.Tools[call.Tool]; spec != nil && spec.Description != "" {
			span.SetAttributes(semconv.GenAIToolDescription(spec.Description))
		}
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
		span.SetAttributes(semconv.ErrorTypeKey.String(string(res.Code())))
		span.SetStatus(codes.Error, string(res.Code()))
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
