// Package tracectx carries W3C trace context and baggage across toolgate's
// edges: read from an HTTP request's headers (the API) or from an MCP
// request's _meta (the keys the MCP tracing proposals use: traceparent,
// tracestate, baggage), and written into every request toolgate sends to a
// dependency. It uses its own propagator (trace context + baggage), not the
// global one, so the behaviour does not depend on what a program installed.
package tracectx

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// The keys of trace context, as HTTP headers (case-insensitive) and as MCP
// _meta keys (exact).
const (
	// TraceParent is the W3C traceparent: version-traceid-parentid-flags.
	TraceParent = "traceparent"
	// TraceState is the W3C tracestate: vendor entries.
	TraceState = "tracestate"
	// Baggage is the W3C baggage: key=value pairs.
	Baggage = "baggage"
)

// Propagator is the one toolgate uses on every edge: W3C trace context and
// W3C baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// FromHeader returns ctx with the trace context and baggage of h, if any. A
// missing or malformed traceparent leaves ctx as it is.
func FromHeader(ctx context.Context, h http.Header) context.Context {
	if h.Get(TraceParent) == "" && h.Get(Baggage) == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// FromMeta returns ctx with the trace context and baggage carried by an MCP
// request's _meta (string values under traceparent, tracestate, baggage).
// Values of another type are ignored.
func FromMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	carrier := metaCarrier{}
	for _, k := range []string{TraceParent, TraceState, Baggage} {
		if s, ok := meta[k].(string); ok && s != "" {
			carrier[k] = s
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return Propagator.Extract(ctx, carrier)
}

// Inject writes the trace context and baggage of ctx into h (nothing when
// ctx has neither).
func Inject(ctx context.Context, h http.Header) {
	Propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// InjectMeta writes the trace context and baggage of ctx into an MCP
// request's _meta.
func InjectMeta(ctx context.Context, meta map[string]any) {
	carrier := metaCarrier{}
	Propagator.Inject(ctx, carrier)
	for k, v := range carrier {
		meta[k] = v
	}
}

// metaCarrier is a TextMapCarrier over the string entries of _meta.
type metaCarrier map[string]string

// Get implements propagation.TextMapCarrier.
func (c metaCarrier) Get(key string) string { return c[key] }

// Set implements propagation.TextMapCarrier.
func (c metaCarrier) Set(key, value string) { c[key] = value }

// Keys implements propagation.TextMapCarrier.
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
