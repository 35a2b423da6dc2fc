package tracectx

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestExtractAndInject(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ctx       func() context.Context
		wantTrace string
		wantBag   string
	}{
		{"header", func() context.Context {
			return FromHeader(context.Background(), http.Header{"Traceparent": {parent}, "Baggage": {"tenant=acme"}})
		}, "4bf92f3577b34da6a3ce929d0e0e4736", "tenant=acme"},
		{"meta", func() context.Context {
			return FromMeta(context.Background(), map[string]any{TraceParent: parent, Baggage: "tenant=acme", "toolgate/run_id": "r1"})
		}, "4bf92f3577b34da6a3ce929d0e0e4736", "tenant=acme"},
		{"meta of the wrong type", func() context.Context {
			return FromMeta(context.Background(), map[string]any{TraceParent: 42})
		}, "", ""},
		{"malformed", func() context.Context {
			return FromHeader(context.Background(), http.Header{"Traceparent": {"00-zz-00f067aa0ba902b7-01"}})
		}, "", ""},
		{"none", func() context.Context { return FromHeader(context.Background(), http.Header{}) }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx()
			sc := trace.SpanContextFromContext(ctx)
			got := ""
			if sc.IsValid() {
				got = sc.TraceID().String()
			}
			if got != tc.wantTrace {
				t.Errorf("trace id %q, want %q", got, tc.wantTrace)
			}
			if b := baggage.FromContext(ctx).String(); b != tc.wantBag {
				t.Errorf("baggage %q, want %q", b, tc.wantBag)
			}
			h := http.Header{}
			Inject(ctx, h)
			meta := map[string]any{}
			InjectMeta(ctx, meta)
			wantParent := ""
			if tc.wantTrace != "" {
				wantParent = parent
			}
			if h.Get(TraceParent) != wantParent || (meta[TraceParent] != nil && meta[TraceParent] != wantParent) {
				t.Errorf("injected header %q, meta %v; want %q", h.Get(TraceParent), meta[TraceParent], wantParent)
			}
		})
	}
}
