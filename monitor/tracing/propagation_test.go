package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/internal/tracectx"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/monitor/tracing"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/types"
)

// The caller's trace context, as an agent host would send it.
const (
	callerTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan    = "00f067aa0ba902b7"
	callerParent  = "00-" + callerTrace + "-" + callerSpan + "-01"
	callerBaggage = "tenant=acme"
)

// payments is a real dependency on 127.0.0.1 that records the trace
// headers of every request it gets.
type payments struct {
	srv      *httptest.Server
	customer string // the owner of every order
	mu       sync.Mutex
	got      map[string]http.Header // "METHOD path" -> trace headers
}

func newPayments(t *testing.T, customer string) *payments {
	p := &payments{got: map[string]http.Header{}, customer: customer}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		p.mu.Lock()
		p.got[r.Method+" "+r.URL.Path] = http.Header{"Traceparent": r.Header.Values("traceparent"), "Baggage": r.Header.Values("baggage")}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/refunds"):
			_, _ = io.WriteString(w, `{"refunds":[]}`)
		case r.Method == http.MethodGet:
			_, _ = io.WriteString(w, `{"order_id":"ORD-1","customer_id":"`+p.customer+`"}`)
		default:
			_, _ = io.WriteString(w, `{"refund_id":"rf_1"}`)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *payments) header(key string) http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[key]
}

// traced is a gateway over the refunds config whose spans go to an
// in-memory exporter.
func traced(t *testing.T, dep *payments) (*toolgate.Gateway, *tracetest.InMemoryExporter) {
	t.Helper()
	cfg, err := config.Parse([]byte(refundsYAML(dep.srv.URL)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Tracer: tracing.Tracer(tp), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw, exp
}

func TestTraceContextThroughTheHTTPAPI(t *testing.T) {
	dep := newPayments(t, "cust_1")
	gw, exp := traced(t, dep)
	srv, err := server.New(server.Options{Gateway: gw, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(srv.Handler())
	defer api.Close()

	post := func(path, body string, header http.Header) []byte {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, api.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := api.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	post("/v1/runs", `{"run_id":"r1","principal":{"id":"cust_1"}}`, nil)
	body := post("/v1/runs/r1/calls", `{"tool":"issue_refund","call_id":"toolu_1","args":{"order_id":"ORD-1","amount_paise":500}}`,
		http.Header{"Traceparent": {callerParent}, "Baggage": {callerBaggage}})
	var res types.Result
	if err := json.Unmarshal(body, &res); err != nil || !res.OK {
		t.Fatalf("call: %v %s", err, body)
	}
	checkTrace(t, exp.GetSpans(), dep)
}

func TestTraceContextThroughMCPMeta(t *testing.T) {
	dep := newPayments(t, "mcp") // the principal of a session without keys
	gw, exp := traced(t, dep)
	h := mcpserver.Handler(gw, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	endpoint := httptest.NewServer(h)
	defer func() { h.Close(); endpoint.Close() }()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint.URL, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
		Name: "issue_refund", Arguments: map[string]any{"order_id": "ORD-1", "amount_paise": 500},
		Meta: mcp.Meta{"traceparent": callerParent, "baggage": callerBaggage, mcpserver.MetaCallID: "toolu_1"},
	})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	checkTrace(t, exp.GetSpans(), dep)
}

// checkTrace checks the spans of one issue_refund call made under the
// caller's trace context: the call span is the caller's child, the
// ownership lookup and the refund each have a CLIENT attempt span after the
// HTTP client conventions, and the dependency got each attempt's
// traceparent and the caller's baggage.
func checkTrace(t *testing.T, spans tracetest.SpanStubs, dep *payments) {
	t.Helper()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	call, ok := byName["execute_tool issue_refund"]
	if !ok {
		t.Fatalf("no execute_tool issue_refund span in %v", names(spans))
	}
	if call.SpanContext.TraceID().String() != callerTrace || call.Parent.SpanID().String() != callerSpan || !call.Parent.IsRemote() {
		t.Fatalf("execute_tool span in trace %s with parent %s, want the caller's %s/%s",
			call.SpanContext.TraceID(), call.Parent.SpanID(), callerTrace, callerSpan)
	}
	if call.InstrumentationScope.Name != tracing.TracerName || call.InstrumentationScope.Version == "" {
		t.Errorf("instrumentation scope %+v, want %s with a version", call.InstrumentationScope, tracing.TracerName)
	}
	wantAttrs(t, call, map[attribute.Key]string{
		semconv.GenAIOperationNameKey:   "execute_tool",
		semconv.GenAIToolNameKey:        "issue_refund",
		semconv.GenAIToolCallIDKey:      "toolu_1",
		semconv.GenAIToolTypeKey:        pipeline.ToolType,
		semconv.GenAIToolDescriptionKey: "Refund part or all of an order to the customer.",
	})

	lookup, ok := byName["owner_lookup get_order"]
	if !ok || lookup.Parent.SpanID() != call.SpanContext.SpanID() {
		t.Fatalf("no owner_lookup get_order child of the call span in %v", names(spans))
	}
	u, _ := url.Parse(dep.srv.URL)
	for _, tc := range []struct {
		method, path, purpose string
		parent                tracetest.SpanStub
	}{
		{"GET", "/orders/ORD-1", "owner", lookup},
		{"POST", "/refunds", "call", call},
	} {
		var attempt *tracetest.SpanStub
		for i, s := range spans {
			if s.Name == tc.method && s.Parent.SpanID() == tc.parent.SpanContext.SpanID() {
				attempt = &spans[i]
			}
		}
		if attempt == nil {
			t.Errorf("no %s attempt span under %s in %v", tc.method, tc.parent.Name, names(spans))
			continue
		}
		if attempt.SpanKind != trace.SpanKindClient {
			t.Errorf("%s attempt span kind %v, want client", tc.method, attempt.SpanKind)
		}
		wantAttrs(t, *attempt, map[attribute.Key]string{
			semconv.HTTPRequestMethodKey:      tc.method,
			semconv.ServerAddressKey:          u.Hostname(),
			semconv.ServerPortKey:             u.Port(),
			semconv.URLFullKey:                dep.srv.URL + tc.path,
			semconv.HTTPResponseStatusCodeKey: strconv.Itoa(http.StatusOK),
			pipeline.PurposeKey:               tc.purpose,
		})
		got := dep.header(tc.method + " " + tc.path)
		want := "00-" + callerTrace + "-" + attempt.SpanContext.SpanID().String() + "-01"
		if got.Get("Traceparent") != want {
			t.Errorf("%s %s received traceparent %q, want the attempt span's %q", tc.method, tc.path, got.Get("Traceparent"), want)
		}
		if got.Get("Baggage") != callerBaggage {
			t.Errorf("%s %s received baggage %q, want %q", tc.method, tc.path, got.Get("Baggage"), callerBaggage)
		}
	}
}

func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[attribute.Key]string) {
	t.Helper()
	got := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value.String()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %s: %s = %q, want %q", s.Name, k, got[k], v)
		}
	}
}

// logBuffer is a concurrency-safe buffer for a JSON log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Without an exporter nothing is recorded, but the caller's trace context
// still reaches the dependency unchanged, and its trace id is in the row.
func TestTraceContextPassesThroughWithoutTracing(t *testing.T) {
	dep := newPayments(t, "cust_1")
	cfg, err := config.Parse([]byte(refundsYAML(dep.srv.URL)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tp, _, err := tracing.Setup(context.Background(), config.Telemetry{Traces: "none"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Tracer: tracing.Tracer(tp), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(t.Context(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := tracectx.FromHeader(t.Context(), http.Header{"Traceparent": {callerParent}})
	res, err := gw.Do(ctx, &toolgate.Call{RunID: run.ID, Tool: "get_order", Args: json.RawMessage(`{"order_id":"ORD-1"}`)})
	if err != nil || !res.OK {
		t.Fatalf("get_order: %v %+v", err, res)
	}
	if got := dep.header("GET /orders/ORD-1").Get("Traceparent"); got != callerParent {
		t.Errorf("the dependency received traceparent %q, want the caller's %q", got, callerParent)
	}
	rows, err := gw.History(t.Context(), run.ID)
	if err != nil || len(rows) != 1 || rows[0].TraceID != callerTrace {
		t.Errorf("rows %+v (%v), want one with the caller's trace id", rows, err)
	}
}

// refundsYAML is the refunds fixture on a memory store with the provider
// at url: issue_refund with its owner check and verify read, no
// permission, key, rules or state.
func refundsYAML(url string) string {
	return refunds.Config(url,
		refunds.Set("tools.list_refunds.input_schema", "{type: object, required: [order_id], properties: {order_id: {type: string}}, additionalProperties: false}"),
		refunds.Set("tools.issue_refund.input_schema.properties", "{order_id: {type: string}, amount_paise: {type: integer, minimum: 1}}"),
		refunds.Delete("tools.issue_refund.permission", "tools.issue_refund.idempotency", "tools.issue_refund.rules",
			"tools.issue_refund.verify.result", "tools.issue_refund.state"))
}
