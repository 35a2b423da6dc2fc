package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func snapshots() []breaker.Snapshot {
	return []breaker.Snapshot{
		{Name: "notes_api", State: breaker.Closed},
		{Name: "payments", State: breaker.Open, ConsecutiveFailures: 5},
		{Name: "search", State: breaker.HalfOpen},
	}
}

func TestRegistryLintsClean(t *testing.T) {
	m := New(Config{Breakers: snapshots})
	m.Record(&types.Execution{Tool: "get_order", Code: types.CodeOK, OK: true, Attempts: 1, LatencyMS: 12})
	m.storeDuration.WithLabelValues("commit").Observe(0.002)
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestRecordCountsRows(t *testing.T) {
	m := New(Config{Breakers: snapshots, NoRuntime: true})
	rows := []types.Execution{
		{Tool: "issue_refund", Code: types.CodeOK, OK: true, Attempts: 1, LatencyMS: 120},
		{Tool: "issue_refund", Code: types.CodeOK, OK: true, Attempts: 3, Retries: 2, LatencyMS: 2400},
		{Tool: "issue_refund", Code: types.CodeOK, OK: true, Replayed: true, LatencyMS: 1},
		{Tool: "issue_refund", Code: types.CodeTimeoutUnknownOutcome, SideEffect: types.SideEffectUnknown, Attempts: 1, LatencyMS: 5004},
		{Tool: "get_order", Code: types.CodeUpstreamError, Attempts: 4, Retries: 3, LatencyMS: 7000},
		{Tool: "refund_everything", Code: types.CodeUnknownTool},
		{Tool: "issue_refund", Code: types.CodeInvalidArgument, LatencyMS: 0.1}, // refused: no attempt
	}
	for i := range rows {
		m.Record(&rows[i])
	}
	for range 5 {
		m.RecordAttempt("issue_refund", monitor.PurposeCall)
	}
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"calls issue_refund ok", testutil.ToFloat64(m.calls.WithLabelValues("issue_refund", "ok", "ok")), 3},
		{"calls issue_refund timeout_unknown_outcome", testutil.ToFloat64(m.calls.WithLabelValues("issue_refund", "timeout_unknown_outcome", "dependency_error")), 1},
		{"calls issue_refund invalid_argument", testutil.ToFloat64(m.calls.WithLabelValues("issue_refund", "invalid_argument", "refused")), 1},
		{"calls get_order upstream_error", testutil.ToFloat64(m.calls.WithLabelValues("get_order", "upstream_error", "dependency_error")), 1},
		{"calls of an unknown tool", testutil.ToFloat64(m.calls.WithLabelValues(UnknownTool, "unknown_tool", "refused")), 1},
		{"duration series (the unknown tool sent nothing)", float64(testutil.CollectAndCount(m.duration)), 2},
		{"attempts issue_refund", testutil.ToFloat64(m.attempts.WithLabelValues("issue_refund", "call")), 5},
		{"retries issue_refund", testutil.ToFloat64(m.retries.WithLabelValues("issue_refund")), 2},
		{"retries get_order", testutil.ToFloat64(m.retries.WithLabelValues("get_order")), 3},
		{"replays issue_refund", testutil.ToFloat64(m.replays.WithLabelValues("issue_refund")), 1},
		{"unknown outcomes issue_refund", testutil.ToFloat64(m.unknown.WithLabelValues("issue_refund")), 1},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.calls); n != 5 {
		t.Errorf("%d call series, want 5 (the invented tool name is not a label)", n)
	}
	if n := histogramCount(t, m, "issue_refund"); n != 3 {
		t.Errorf("issue_refund's duration histogram has %d samples, want 3: the replay and the refusal sent nothing", n)
	}
	want := `
# HELP toolgate_call_duration_seconds Time from a call's admission to its committed result, every attempt and backoff included, for the calls that sent at least one attempt.
# TYPE toolgate_call_duration_seconds histogram
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.005"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.01"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.025"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.05"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.1"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.25"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="0.5"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="1"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="2.5"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="5"} 0
toolgate_call_duration_seconds_bucket{tool="get_order",le="10"} 1
toolgate_call_duration_seconds_bucket{tool="get_order",le="20"} 1
toolgate_call_duration_seconds_bucket{tool="get_order",le="30"} 1
toolgate_call_duration_seconds_bucket{tool="get_order",le="60"} 1
toolgate_call_duration_seconds_bucket{tool="get_order",le="+Inf"} 1
toolgate_call_duration_seconds_sum{tool="get_order"} 7
toolgate_call_duration_seconds_count{tool="get_order"} 1
# HELP toolgate_breaker_state Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open.
# TYPE toolgate_breaker_state gauge
toolgate_breaker_state{dependency="notes_api"} 0
toolgate_breaker_state{dependency="payments"} 2
toolgate_breaker_state{dependency="search"} 1
`
	// Only get_order's histogram is compared: one series is enough to pin
	// the buckets and the unit (seconds).
	if err := testutil.GatherAndCompare(onlyTool{m, "get_order"}, strings.NewReader(want),
		"toolgate_call_duration_seconds", "toolgate_breaker_state"); err != nil {
		t.Error(err)
	}
}

func TestInstrumentStoreTimesWrites(t *testing.T) {
	m := New(Config{NoRuntime: true})
	st := InstrumentStore(memory.New(), m)
	defer st.Close()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := st.CreateRun(ctx, &types.Run{ID: "r1", State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.BeginOperation(ctx, &types.Operation{Key: "k", ArgsHash: "h", RunID: "r1", Tool: "issue_refund",
		Owner: "me", LeaseUntil: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for step := range 2 {
		if err := st.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r1", Step: int64(step + 1), Tool: "issue_refund",
			Args: json.RawMessage(`{}`), Result: json.RawMessage(`{}`), Code: types.CodeOK, OK: true, FinishedAt: now}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "missing"}}); err == nil {
		t.Fatal("a commit to a missing run succeeded")
	}
	counts := map[string]uint64{}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "toolgate_store_commit_duration_seconds" {
			continue
		}
		for _, metric := range f.GetMetric() {
			counts[metric.GetLabel()[0].GetValue()] = metric.GetHistogram().GetSampleCount()
		}
	}
	if counts["commit"] != 3 || counts["begin_operation"] != 1 {
		t.Fatalf("timed writes %v, want 3 commits (the failed one too) and 1 begin", counts)
	}
	if u, ok := st.(interface{ Unwrap() store.Store }); !ok || u.Unwrap() == nil {
		t.Fatal("the instrumented store does not unwrap")
	}
}

func TestHandlerServesTheTextFormat(t *testing.T) {
	m := New(Config{Breakers: snapshots})
	m.Record(&types.Execution{Tool: "get_order", Code: types.CodeOK, OK: true, Attempts: 1, LatencyMS: 12})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`toolgate_calls_total{class="ok",code="ok",tool="get_order"} 1`, "go_goroutines", "process_cpu_seconds_total",
		`toolgate_breaker_state{dependency="payments"} 2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// onlyTool gathers m's registry keeping one tool's series of labelled
// metrics (and every series without a tool label).
type onlyTool struct {
	m    *Metrics
	tool string
}

func (o onlyTool) Gather() ([]*dto.MetricFamily, error) {
	families, err := o.m.Registry().Gather()
	for _, f := range families {
		kept := f.Metric[:0]
		for _, metric := range f.Metric {
			keep := true
			for _, l := range metric.GetLabel() {
				if l.GetName() == "tool" && l.GetValue() != o.tool {
					keep = false
				}
			}
			if keep {
				kept = append(kept, metric)
			}
		}
		f.Metric = kept
	}
	return families, err
}

// histogramCount is the sample count of a tool's call duration histogram.
func histogramCount(t *testing.T, m *Metrics, tool string) uint64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "toolgate_call_duration_seconds" {
			continue
		}
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "tool" && l.GetValue() == tool {
					return metric.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}
