package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/types"
)

func TestAlerts(t *testing.T) {
	clk := newClock()
	st := newStore(t, "memory", clk)
	now := t0.Add(2 * time.Hour)
	opened := now.Add(-18 * time.Second)
	agg := newAgg(t, st, clk, "a", func(c *Config) {
		c.Breakers = func() []breaker.Snapshot {
			return []breaker.Snapshot{
				{Name: "notes_api", State: breaker.Closed},
				{Name: "payments", State: breaker.Open, ConsecutiveFailures: 5, OpenedAt: opened, RetryIn: 42 * time.Second},
			}
		}
	})
	// get_order: 2% errors over the hour before, 35% in the last 5 minutes.
	for k := range 100 {
		at := now.Add(-time.Hour + time.Duration(k)*30*time.Second)
		if k%50 == 0 {
			agg.Record(failed("get_order", at, 40, types.CodeUpstreamError))
		} else {
			agg.Record(row("get_order", at, 40))
		}
	}
	for k := range 40 {
		at := now.Add(-3*time.Minute + time.Duration(k)*time.Second)
		if k < 14 {
			agg.Record(failed("get_order", at, 40, types.CodeUpstreamError))
		} else {
			agg.Record(row("get_order", at, 40))
		}
	}
	// post_note: 50% errors but only 10 calls: no alert.
	for k := range 10 {
		if k%2 == 0 {
			agg.Record(failed("post_note", now.Add(-time.Minute), 10, types.CodeRejected))
		} else {
			agg.Record(row("post_note", now.Add(-time.Minute), 10))
		}
	}
	// issue_refund: p95 4.6 s against its 5 s timeout, from 20 minutes ago.
	for k := range 40 {
		ms := 900.0
		if k%10 >= 8 {
			ms = 4600
		}
		agg.Record(row("issue_refund", now.Add(-20*time.Minute+time.Duration(k)*10*time.Second), ms))
	}
	// Three refunds whose outcome is unknown.
	ctx := t.Context()
	for _, key := range []string{"k1", "k2", "k3"} {
		if _, _, err := st.BeginOperation(ctx, &types.Operation{Key: key, ArgsHash: "h", RunID: "run-1", Tool: "issue_refund",
			Owner: "dead", LeaseUntil: t0, CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.AbandonOwner(ctx, ""); err != nil {
		t.Fatal(err)
	}
	clk.Set(now)

	alerts, err := agg.Alerts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind          AlertKind
		tool, dep     string
		messagePrefix string
	}{
		{AlertUnknownOutcomes, "issue_refund", "payments", "3 issue_refund calls have an unknown outcome waiting for verify with list_refunds"},
		{AlertBreakerOpen, "", "payments", "payments circuit breaker is open after 5 failures in a row: its tools fail at once with circuit_open and nothing is sent; one probe goes through in 42 s"},
		{AlertErrorRateJump, "get_order", "payments", "get_order errors jumped to 35% of 40 calls in the last 5m (from 2% over the hour before); most are upstream_error (14)"},
		{AlertTimeoutPressure, "issue_refund", "payments", "issue_refund p95 is 4.6 s against a 5 s timeout: about 1 in 20 calls is within 0.4 s of timing out; a read timeout of 7 s would leave 50% headroom over p99"},
	}
	if len(alerts) != len(want) {
		t.Fatalf("%d alerts, want %d: %+v", len(alerts), len(want), alerts)
	}
	for i, w := range want {
		a := alerts[i]
		if a.Kind != w.kind || a.Tool != w.tool || a.Dependency != w.dep || !strings.HasPrefix(a.Message, w.messagePrefix) {
			t.Errorf("alert %d = %+v\nwant kind %s, tool %q, dependency %q, message %q...", i, a, w.kind, w.tool, w.dep, w.messagePrefix)
		}
		if a.Since.IsZero() || a.Since.After(now) {
			t.Errorf("alert %d since %s", i, a.Since)
		}
	}
	if !alerts[1].Since.Equal(opened) {
		t.Errorf("breaker alert since %s, want when it opened %s", alerts[1].Since, opened)
	}
	// The first minute whose own p95 crossed: 6 calls a minute from
	// -20m, the first slow ones (k = 8, 9) in the minute at -19m.
	if want := now.Add(-19 * time.Minute); !alerts[3].Since.Equal(want) {
		t.Errorf("pressure since %s, want the first slow minute %s", alerts[3].Since, want)
	}
	if want := now.Add(-3 * time.Minute); !alerts[2].Since.Equal(want) {
		t.Errorf("error jump since %s, want %s", alerts[2].Since, want)
	}
}

func TestNoAlertsWhenAllIsWell(t *testing.T) {
	clk := newClock()
	agg := newAgg(t, newStore(t, "memory", clk), clk, "a")
	for k := range 100 {
		agg.Record(row("get_order", t0.Add(time.Duration(k)*time.Second), 30))
	}
	clk.Set(t0.Add(2 * time.Minute))
	alerts, err := agg.Alerts(t.Context())
	if err != nil || len(alerts) != 0 {
		t.Fatalf("alerts %+v, %v; want none", alerts, err)
	}
}

func TestFormatting(t *testing.T) {
	cases := []struct{ got, want string }{
		{formatMS(850), "850 ms"},
		{formatMS(4600), "4.6 s"},
		{formatMS(5000), "5 s"},
		{formatMS(12_400), "12 s"},
		{formatGap(400, 5000), "0.4 s"},
		{formatGap(40, 5000), "40 ms"},
		{percent(0.35), "35%"},
		{percent(0.025), "2.5%"},
		{percent(0.02), "2%"},
		{FormatWindow(time.Hour), "1h"},
		{FormatWindow(15 * time.Minute), "15m"},
		{FormatWindow(7 * 24 * time.Hour), "7d"},
		{FormatWindow(90 * time.Minute), "90m"},
		{FormatWindow(90 * time.Second), "1m30s"},
		{FormatWindow(time.Hour + 30*time.Second), "1h0m30s"},
		{FormatWindow(1500 * time.Millisecond), "1.5s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
