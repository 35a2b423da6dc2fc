package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

// statsYAML gives the refunds fixture's tools the read timeouts the
// reports compare with: issue_refund 5s, get_order 2s.
var statsYAML = refunds.Config("http://127.0.0.1:1",
	refunds.Set("store", "sqlite:tg.db"),
	refunds.Delete("tools.list_refunds", "tools.issue_refund.verify"),
	refunds.Set("tools.issue_refund.timeout", "{read: 5s}"),
	refunds.Set("tools.get_order.timeout", "{read: 2s}"))

// statsSetup writes a config whose SQLite store is in a temporary folder
// and returns its path and the store's URL.
func statsSetup(t *testing.T) (cfgPath, dbURL string) {
	t.Helper()
	dir := t.TempDir()
	cfgPath = filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(cfgPath, []byte(statsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, "sqlite:" + filepath.Join(dir, "tg.db")
}

func statsRow(tool string, step int, at time.Time, ms float64, code types.Code) *types.Execution {
	return &types.Execution{RunID: "r1", Step: int64(step), CallID: "c" + strconv.Itoa(step), Tool: tool, Dependency: "payments",
		Args: json.RawMessage(`{}`), Code: code, OK: code == types.CodeOK, Attempts: 1, LatencyMS: ms,
		StartedAt: at, FinishedAt: at, Result: json.RawMessage(`{}`)}
}

func runStatsCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, append([]string{"stats"}, args...))
	return code, out.String(), errOut.String()
}

func TestStatsFromRows(t *testing.T) {
	cfgPath, dbURL := statsSetup(t)
	ctx := context.Background()
	st, err := storeurl.Open(ctx, dbURL, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &types.Run{ID: "r1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range 40 {
		ms, code := 900.0, types.CodeOK
		if i%10 >= 8 {
			ms = 4600
		}
		if i%20 == 0 {
			code = types.CodeTimeoutUnknownOutcome
		}
		if err := st.Commit(ctx, &store.Commit{Execution: statsRow("issue_refund", i+1, now.Add(-time.Duration(i)*time.Second), ms, code)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	code, out, errOut := runStatsCmd(t, "--config", cfgPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Log("\n" + out)
	for _, want := range []string{"Last 1h, exact, from the execution rows.", "TOOL", "SUGGESTED",
		"issue_refund", "40", "5.0%", "4.6s", "5s", "7s", "!! p95 near timeout", "timeout_unknown_outcome 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runStatsCmd(t, "--config", cfgPath, "--json", "--window", "15m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep stats.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if f := rep.Tools["issue_refund"]; rep.Window != "15m" || rep.Source != stats.SourceRows || f == nil || f.Calls != 40 || !f.TimeoutPressure || f.TimeoutMS != 5000 {
		t.Errorf("report %+v, issue_refund %+v", rep, f)
	}
}

// TestStatsFourSamplesAndRefusals: issue 25's figures, through the
// command: calls of 0, 0, 0 ms and 16 s show p95 and p99 of 16 s (the old
// rank showed 0.1ms), no suggestion below 20 attempts, and the two
// refusals neither pull the percentiles down nor count as the
// dependency's errors.
func TestStatsFourSamplesAndRefusals(t *testing.T) {
	cfgPath, dbURL := statsSetup(t)
	ctx := context.Background()
	st, err := storeurl.Open(ctx, dbURL, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &types.Run{ID: "r1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rows := []*types.Execution{statsRow("issue_refund", 1, now, 0, types.CodeOK), statsRow("issue_refund", 2, now, 0, types.CodeOK),
		statsRow("issue_refund", 3, now, 0, types.CodeOK), statsRow("issue_refund", 4, now, 16_000, types.CodeOK)}
	for i := range 2 {
		r := statsRow("issue_refund", 5+i, now, 0.1, types.CodeInvalidArgument)
		r.Attempts = 0
		rows = append(rows, r)
	}
	for _, r := range rows {
		if err := st.Commit(ctx, &store.Commit{Execution: r}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, errOut := runStatsCmd(t, "--config", cfgPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	var line string
	for _, l := range lines {
		if strings.HasPrefix(l, "issue_refund") {
			line = l
		}
	}
	fields := strings.Fields(line)
	// TOOL CALLS REFUSED DEP-ERR% RETRY% SAMPLES P50 P95 P99 TIMEOUT SUGGESTED...
	if len(fields) < 11 || fields[1] != "6" || fields[2] != "2" || fields[3] != "0.0%" || fields[5] != "4" ||
		fields[6] != "0" || fields[7] != "16s" || fields[8] != "16s" {
		t.Errorf("issue_refund line %q: want 6 calls, 2 refused, 0.0%% dependency errors, 4 samples, p50 0, p95 and p99 16s", line)
	}
	for _, want := range []string{"not enough data yet (4 of 20 attempts)", "refused invalid_argument 2", "REFUSED", "DEP-ERR%", "SAMPLES"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestStatsFromFlushedBuckets(t *testing.T) {
	cfgPath, dbURL := statsSetup(t)
	ctx := context.Background()
	st, err := storeurl.Open(ctx, dbURL, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A server's aggregator saw more calls than the exact path reads.
	server, err := stats.New(ctx, &stats.Config{Store: st, Replica: "server-1", FlushInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range stats.DefaultExactRows + 500 {
		server.Record(statsRow("get_order", i, now.Add(-time.Duration(i%300)*time.Second), float64(20+i%100), types.CodeOK))
	}
	if err := server.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := runStatsCmd(t, "--config", cfgPath, "--window", "1h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Log("\n" + out)
	for _, want := range []string{"from the sketches: percentiles within 1%", "get_order", "10500", "0.0%", "2s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "!!") {
		t.Errorf("get_order is far from its timeout:\n%s", out)
	}
}

func TestStatsEmptyAndUsage(t *testing.T) {
	cfgPath, _ := statsSetup(t)
	if code, out, errOut := runStatsCmd(t, "--config", cfgPath); code != 0 || !strings.Contains(out, "No calls in the last 1h") {
		t.Errorf("empty store: exit %d, %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{"--window", "soon"}, {"--window", "0s"}, {"extra"}} {
		if code, _, _ := runStatsCmd(t, append([]string{"--config", cfgPath}, args...)...); code != 2 {
			t.Errorf("stats %v: exit %d, want 2", args, code)
		}
	}
}

func TestFormatMillis(t *testing.T) {
	for ms, want := range map[float64]string{0: "0", 0.42: "0.4ms", 45.2: "45ms", 4600: "4.6s", 5000: "5s", 12_400: "12s"} {
		if got := formatMillis(ms); got != want {
			t.Errorf("formatMillis(%v) = %q, want %q", ms, got, want)
		}
	}
}
