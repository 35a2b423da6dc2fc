package pipeline

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/types"
)

// tracerName is the instrumentation scope of toolgate's spans.
const tracerName = "github.com/toolgate/toolgate"

func defaultTracer() trace.Tracer { return otel.Tracer(tracerName) }

// startCall opens the call's span, named and attributed after the
// OpenTelemetry GenAI semantic conventions for tool execution.
func (p *Pipeline) startCall(ctx context.Context, call *types.Call) (context.Context, trace.Span) {
	ctx, span := p.tracer.Start(ctx, "execute_tool "+call.Tool, trace.WithSpanKind(trace.SpanKindInternal))
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
	ctx, span := p.tracer.Start(ctx, "attempt", trace.WithSpanKind(trace.SpanKindClient))
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
