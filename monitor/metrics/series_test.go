package metrics

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/pipeline"
)

// refundsConfig loads the refunds config against a dependency on 127.0.0.1 whose
// refund endpoint fails with 500 (an unknown outcome for a write) and whose
// verify read finds the refund.
func refundsConfig(t *testing.T) *config.Config {
	t.Helper()
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost:
			http.Error(w, `{"error":"try later"}`, http.StatusInternalServerError)
		case strings.HasSuffix(r.URL.Path, "/refunds"):
			_, _ = io.WriteString(w, `{"refunds":[{"amount_paise":500}]}`)
		default:
			_, _ = io.WriteString(w, `{"order_id":"ORD-1","customer_id":"cust_1"}`)
		}
	}))
	t.Cleanup(dep.Close)
	cfg, err := config.Parse([]byte(refundsYAML(dep.URL)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestEveryCounterHasASeriesPerToolFromTheStart(t *testing.T) {
	cfg := refundsConfig(t)
	m := New(Config{Tools: cfg, NoRuntime: true})
	type series struct {
		metric string
		labels []string
	}
	var want []series
	for name := range cfg.Tools {
		want = append(want,
			series{"toolgate_calls_total", []string{name, "ok", "ok"}}, // tool, class, code
			series{"toolgate_attempts_total", []string{name, "call"}},
			series{"toolgate_retries_total", []string{name}},
			series{"toolgate_replays_total", []string{name}},
			series{"toolgate_unknown_outcomes_total", []string{name}},
		)
	}
	want = append(want,
		series{"toolgate_attempts_total", []string{"get_order", "owner"}},
		series{"toolgate_attempts_total", []string{"list_refunds", "verify"}},
		series{"toolgate_calls_total", []string{UnknownTool, "refused", "unknown_tool"}},
	)
	have := gathered(t, m)
	for _, s := range want {
		if v, ok := have[s.metric+"|"+strings.Join(s.labels, "|")]; !ok || v != 0 {
			t.Errorf("%s%v: present %v, value %v; want a zero series before any call", s.metric, s.labels, ok, v)
		}
	}
}

func TestLookupsAreCountedAsAttempts(t *testing.T) {
	cfg := refundsConfig(t)
	m := New(Config{Tools: cfg, NoRuntime: true})
	ctx := context.Background()
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Sinks: []pipeline.Sink{m}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := gw.Do(ctx, &toolgate.Call{RunID: run.ID, Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-1","amount_paise":500}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !res.Meta.Verified {
		t.Fatalf("ok %v verified %v (%+v), want a refund settled by its verify read", res.OK, res.Meta.Verified, res.Error)
	}
	for _, c := range []struct {
		tool, purpose string
		want          float64
	}{
		{"get_order", "owner", 1},
		{"issue_refund", "call", 1},
		{"list_refunds", "verify", 1},
		{"get_order", "call", 0},
	} {
		if got := testutil.ToFloat64(m.attempts.WithLabelValues(c.tool, c.purpose)); got != c.want {
			t.Errorf("toolgate_attempts_total{tool=%q,purpose=%q} = %v, want %v", c.tool, c.purpose, got, c.want)
		}
	}
}

// gathered maps "metric|label values..." to the value of every counter
// series of m's registry.
func gathered(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			if metric.GetCounter() == nil {
				continue
			}
			key := f.GetName()
			// Labels come sorted by name (class, code, purpose, tool): the
			// tool goes first, the others keep their order.
			var vals []string
			for _, l := range metric.GetLabel() {
				if l.GetName() == "tool" {
					vals = append([]string{l.GetValue()}, vals...)
				} else {
					vals = append(vals, l.GetValue())
				}
			}
			out[key+"|"+strings.Join(vals, "|")] = metric.GetCounter().GetValue()
		}
	}
	return out
}

// TestImportedToolsHaveZeroSeries: the tools LiveTools returns (those
// imported from MCP servers and OpenAPI documents) get their zero series
// at the scrape, as configured tools do from the start (issue 27).
func TestImportedToolsHaveZeroSeries(t *testing.T) {
	cfg := refundsConfig(t)
	live := &config.Config{Tools: map[string]*config.Tool{"crm_find_customer": {}}}
	m := New(Config{Tools: cfg, NoRuntime: true, LiveTools: func() *config.Config { return live }})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`toolgate_calls_total{class="ok",code="ok",tool="crm_find_customer"} 0`,
		`toolgate_attempts_total{purpose="call",tool="crm_find_customer"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
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
