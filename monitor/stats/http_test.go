package stats

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

func TestHandlers(t *testing.T) {
	clk := newClock()
	agg := newAgg(t, newStore(t, "memory", clk), clk, "a", sketchOnly)
	for k := range 100 {
		agg.Record(row("issue_refund", t0.Add(time.Duration(k)*time.Second), 4700))
	}
	clk.Set(t0.Add(2 * time.Minute))

	serve := func(h http.HandlerFunc, target string) (int, map[string]any) {
		t.Helper()
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", target, ct)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v: %s", target, err, rec.Body)
		}
		return rec.Code, body
	}

	code, body := serve(agg.ServeStats, "/v1/stats?window=1h")
	if code != http.StatusOK || body["window"] != "1h" {
		t.Fatalf("stats: %d %v", code, body)
	}
	tool := body["tools"].(map[string]any)["issue_refund"].(map[string]any)
	for _, field := range []string{"calls", "error_rate", "retry_rate", "p50_ms", "p95_ms", "p99_ms", "timeout_ms",
		"timeout_pressure", "suggested_timeout_ms", "codes", "input_tokens", "output_tokens", "source"} {
		if _, ok := tool[field]; !ok {
			t.Errorf("stats: the tool's figures lack %q: %v", field, tool)
		}
	}
	if tool["calls"] != 100.0 || tool["timeout_ms"] != 5000.0 || tool["timeout_pressure"] != true {
		t.Errorf("stats: %v", tool)
	}
	if _, ok := body["dependencies"].(map[string]any)["payments"]; !ok {
		t.Errorf("stats: no payments dependency: %v", body["dependencies"])
	}
	if code, body := serve(agg.ServeStats, "/v1/stats"); code != http.StatusOK || body["window"] != "1h" {
		t.Errorf("stats without a window: %d %v", code, body["window"])
	}

	for _, target := range []string{"/v1/stats?window=soon", "/v1/stats?window=-1h", "/v1/stats?window=400d",
		"/v1/stats/series?window=1h", "/v1/stats/series?tool=x&window=0s"} {
		h := agg.ServeStats
		if target[:16] == "/v1/stats/series" {
			h = agg.ServeSeries
		}
		code, body := serve(h, target)
		var res types.Result
		b, _ := json.Marshal(body)
		_ = json.Unmarshal(b, &res)
		if code != http.StatusBadRequest || res.OK || res.Error == nil || res.Error.Code != types.CodeBadRequest || res.Error.Message == "" {
			t.Errorf("%s: %d %v; want 400 bad_request in the envelope", target, code, body)
		}
	}

	code, body = serve(agg.ServeSeries, "/v1/stats/series?tool=issue_refund&window=1h")
	points := body["points"].([]any)
	if code != http.StatusOK || body["timeout_ms"] != 5000.0 || body["step"] != "1m" || len(points) != 2 {
		t.Fatalf("series: %d %v", code, body)
	}
	p := points[0].(map[string]any)
	if p["calls"] != 60.0 || p["p95_ms"].(float64) < 4650 || p["start"] != "2026-11-30T12:00:00Z" {
		t.Errorf("series point %v", p)
	}

	code, body = serve(agg.ServeAlerts, "/v1/alerts")
	alerts, ok := body["alerts"].([]any)
	if code != http.StatusOK || !ok || len(alerts) != 1 || alerts[0].(map[string]any)["kind"] != "timeout_pressure" {
		t.Errorf("alerts: %d %v", code, body)
	}
}

func TestSeriesStepsStayFew(t *testing.T) {
	clk := newClock()
	agg := newAgg(t, newStore(t, "memory", clk), clk, "a")
	cases := []struct {
		window, want time.Duration
	}{
		{time.Hour, time.Minute},
		{12 * time.Hour, time.Minute},
		{24 * time.Hour, 2 * time.Minute},
		{7 * 24 * time.Hour, 14 * time.Minute},
	}
	for _, c := range cases {
		if got := agg.Step(c.window); got != c.want {
			t.Errorf("Step(%s) = %s, want %s", c.window, got, c.want)
		}
	}
	// A day of calls, one a minute, in 2-minute steps: 720 points of 2.
	for k := range 24 * 60 {
		agg.Record(row("get_order", t0.Add(time.Duration(k)*time.Minute), float64(k)))
	}
	clk.Set(t0.Add(24*time.Hour - time.Second))
	points, err := agg.Series(t.Context(), "get_order", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 720 || points[0].Calls != 2 || !points[0].Start.Equal(t0) || !points[719].Start.Equal(t0.Add(24*time.Hour-2*time.Minute)) {
		t.Fatalf("%d points, first %+v", len(points), points[0])
	}
}
