package pipeline

import (
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestSilentProviders: the unset global provider and otel's noop provider
// are found to record nothing, by what their spans are rather than by type
// names; an SDK provider is not, whether it samples or not.
func TestSilentProviders(t *testing.T) {
	sampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	dropped := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	t.Cleanup(func() {
		_ = sampled.Shutdown(t.Context())
		_ = dropped.Shutdown(t.Context())
	})
	tests := []struct {
		name   string
		tp     trace.TracerProvider
		silent bool
	}{
		{"unset global", otel.GetTracerProvider(), true}, // nothing in this binary sets one
		{"noop", noop.NewTracerProvider(), true},
		{"sdk, sampled", sampled, false},
		{"sdk, not sampled", dropped, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := makesNoSpans(tt.tp.Tracer(tracerName)); got != tt.silent {
				t.Errorf("makesNoSpans = %v, want %v", got, tt.silent)
			}
			if got := silentGlobal(tt.tp); got != tt.silent {
				t.Errorf("silentGlobal = %v, want %v", got, tt.silent)
			}
		})
	}
	if unsetProvider == nil {
		t.Fatal("the unset global provider was not recognised at start-up")
	}
	if tr := (&Pipeline{}).activeTracer(); tr != nil {
		t.Errorf("activeTracer with the global provider unset = %T, want nil (no spans made)", tr)
	}
	if tr := (&Pipeline{tracer: sampled.Tracer(tracerName)}).activeTracer(); tr == nil {
		t.Error("activeTracer with an explicit SDK tracer = nil, want it")
	}
}
