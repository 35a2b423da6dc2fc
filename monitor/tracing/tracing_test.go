package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor/tracing"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRetriedCallIsOneSpanWithAChildPerAttempt(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	var calls atomic.Int32
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"lookup_weather": {Description: "Current weather in a city.", Effect: "read",
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				if calls.Add(1) <= 2 {
					return nil, &config.FuncError{Code: types.CodeUpstreamError, Message: "weather service busy", Transient: true}
				}
				return map[string]any{"temp_c": 31}, nil
			}},
	}}
	ctx := context.Background()
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Tracer: tp.Tracer(tracing.TracerName),
		Clock: clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)), Rand: clock.FixedRand(0.5),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := gw.Do(ctx, &toolgate.Call{RunID: run.ID, Tool: "lookup_weather", CallID: "toolu_01", Args: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Meta.Attempts != 3 {
		t.Fatalf("ok %v after %d attempts, want ok after 3: %+v", res.OK, res.Meta.Attempts, res.Error)
	}

	spans := exp.GetSpans()
	var call []tracetest.SpanStub
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "execute_tool") {
			call = append(call, s)
		}
	}
	if len(call) != 1 || call[0].Name != "execute_tool lookup_weather" {
		t.Fatalf("call spans %v, want one execute_tool lookup_weather", names(spans))
	}
	parent := call[0]
	var attempts []string
	for _, s := range spans {
		if s.Parent.SpanID() == parent.SpanContext.SpanID() {
			attempts = append(attempts, s.Name)
		}
	}
	want := []string{"attempt lookup_weather", "attempt lookup_weather", "attempt lookup_weather"}
	if strings.Join(attempts, ",") != strings.Join(want, ",") {
		t.Errorf("children of the call span %v, want %v", attempts, want)
	}
	attrs := map[attribute.Key]string{}
	for _, kv := range parent.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	for k, v := range map[attribute.Key]string{
		"gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name":      "lookup_weather",
		"gen_ai.tool.call.id":   "toolu_01",
	} {
		if attrs[k] != v {
			t.Errorf("call span %s = %q, want %q", k, attrs[k], v)
		}
	}

	rows, err := gw.History(ctx, run.ID)
	if err != nil || len(rows) != 1 {
		t.Fatalf("history %d rows, %v", len(rows), err)
	}
	if got, want := rows[0].TraceID, parent.SpanContext.TraceID().String(); got != want {
		t.Errorf("the row's trace id %q, the span's %q", got, want)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func TestSetupNone(t *testing.T) {
	tp, shutdown, err := tracing.Setup(context.Background(), config.Telemetry{Traces: "none"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(tracing.TracerName).Start(context.Background(), "x")
	if span.SpanContext().IsValid() {
		t.Error("traces: none records spans")
	}
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSetupStdout(t *testing.T) {
	var out bytes.Buffer
	tp, shutdown, err := tracing.Setup(context.Background(), config.Telemetry{Traces: "stdout", ServiceName: "gw-test"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(tracing.TracerName).Start(context.Background(), "execute_tool get_order")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Name":"execute_tool get_order"`, `"Value":"gw-test"`, `"Key":"service.version"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out.String())
		}
	}
}

func TestSetupOTLPPostsToTheCollector(t *testing.T) {
	var posts atomic.Int32
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		_, _ = io.Copy(io.Discard, r.Body)
		posts.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	tp, shutdown, err := tracing.Setup(ctx, config.Telemetry{Traces: "otlp", OTLPEndpoint: srv.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(tracing.TracerName).Start(ctx, "execute_tool get_order")
	span.End()
	if err := shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}
	if posts.Load() == 0 || path.Load() != tracing.OTLPTracesPath {
		t.Fatalf("%d posts to %v, want spans posted to %s", posts.Load(), path.Load(), tracing.OTLPTracesPath)
	}
}

func TestSetupRefusesUnknownExporters(t *testing.T) {
	for _, cfg := range []config.Telemetry{{Traces: "jaeger"}, {Traces: "otlp", OTLPEndpoint: "collector:4318"}} {
		if _, _, err := tracing.Setup(context.Background(), cfg, io.Discard); err == nil {
			t.Errorf("Setup(%+v) succeeded", cfg)
		}
	}
}

func TestExportErrorsGoThroughSlog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "collector refuses", http.StatusBadRequest) // permanent: not retried
	}))
	defer srv.Close()
	var logs logBuffer
	tracing.LogErrors(slog.New(slog.NewJSONHandler(&logs, nil)))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	ctx := context.Background()
	tp, shutdown, err := tracing.Setup(ctx, config.Telemetry{Traces: "otlp", OTLPEndpoint: srv.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tracing.Tracer(tp).Start(ctx, "execute_tool get_order")
	span.End()
	_ = shutdown(ctx) // the last batch's export fails and is handed to otel.Handle
	var line struct {
		Level, Msg, Err string
	}
	first, _, _ := strings.Cut(logs.String(), "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.Level != "ERROR" || !strings.Contains(line.Err, "400") {
		t.Fatalf("log %q (%v), want a JSON error line about the refused export", logs.String(), err)
	}
}
