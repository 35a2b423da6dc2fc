package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// chromium finds Debian's Chromium; `make test` installs it. Outside CI a
// machine without it skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; make test installs it (scripts/ensure-tools.sh)")
	}
	t.Skip("chromium is not installed (make test installs it)")
	return ""
}

// stack is a toolgate with stats, the API and the dashboard, in process, on
// a fake clock: each tool moves the clock on by its latency, so the figures
// are exact and nothing sleeps. issue_refund answers in 930 ms against a
// 1 s read timeout: under timeout pressure.
func stack(t *testing.T) (*httptest.Server, *toolgate.Gateway) {
	t.Helper()
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	latency := func(d time.Duration) config.Func {
		return func(ctx context.Context, args json.RawMessage) (any, error) {
			clk.Advance(d)
			return map[string]any{"ok": true}, nil
		}
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	cfg := &config.Config{Store: "memory", Tools: map[string]*config.Tool{
		"lookup_order": {Description: "Look up an order.", Effect: types.EffectRead, InputSchema: schema,
			Timeout: config.Timeout{Read: config.Duration(2 * time.Second)}, Func: latency(40 * time.Millisecond)},
		"issue_refund": {Description: "Refund an order.", Effect: types.EffectWrite, InputSchema: schema,
			Timeout: config.Timeout{Read: config.Duration(time.Second)}, Func: latency(930 * time.Millisecond),
			Rules:  []config.Rule{{Deny: "args.n >= 1000", Approval: true, Message: "Refunds of 1000 or more need a person's approval; wait for it."}},
			Quotas: []config.Quota{{Name: "refunds_per_customer", Limit: 100, Window: config.Duration(time.Hour)}}},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	st := memory.NewWithClock(clk.Now)
	agg, err := stats.New(context.Background(), &stats.Config{Store: st, Tools: cfg, Replica: "test", Clock: clk, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: st, Clock: clk,
		Sinks: []toolgate.Sink{agg}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	page := dashboard.Handler()
	srv, err := server.New(server.Options{Gateway: gw, Logger: slog.New(slog.DiscardHandler), Mounts: []server.Mount{
		{Pattern: "GET /{$}", Handler: page, Public: true},
		{Pattern: "GET /assets/", Handler: page, Public: true},
		{Pattern: "GET /favicon.ico", Handler: page, Public: true},
		{Pattern: "GET /v1/breakers", Handler: dashboard.Breakers(gw.Breakers)},
		{Pattern: "GET /v1/stats", Handler: http.HandlerFunc(agg.ServeStats)},
		{Pattern: "GET /v1/stats/series", Handler: http.HandlerFunc(agg.ServeSeries)},
		{Pattern: "GET /v1/alerts", Handler: http.HandlerFunc(agg.ServeAlerts)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		agg.Close(context.Background())
		gw.Close()
	})
	return ts, gw
}

func TestDashboardInChromium(t *testing.T) {
	exe := chromium(t)
	ts, gw := stack(t)
	ctx := context.Background()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{ID: "run_demo", Principal: toolgate.Principal{ID: "cust_42"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		gw.Call(ctx, run.ID, "lookup_order", map[string]any{"n": i})
		gw.Call(ctx, run.ID, "issue_refund", map[string]any{"n": i})
	}
	gw.Call(ctx, run.ID, "lookup_ordr", map[string]any{})                        // a typo: one failure in the history
	held, err := gw.Call(ctx, run.ID, "issue_refund", map[string]any{"n": 5000}) // held for a person
	if err != nil || held.Code() != types.CodeApprovalRequired {
		t.Fatalf("a large refund: %v, %+v; want approval_required", err, held)
	}

	alloc, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(1440, 1000))...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	err = chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				problems = append(problems, "console.error: "+strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			// The browser's own console errors: a resource that failed to
			// load (a 404 favicon), a CSP violation, a network error.
			if e.Entry.Level == cdplog.EntryLevelError {
				problems = append(problems, fmt.Sprintf("console %s error: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				problems = append(problems, fmt.Sprintf("HTTP %d for %s", e.Response.Status, e.Response.URL))
			}
		case *network.EventLoadingFailed:
			if !e.Canceled {
				problems = append(problems, fmt.Sprintf("loading failed: %s (%s)", e.ErrorText, e.Type))
			}
		}
	})
	if err != nil {
		t.Fatalf("chromium did not start: %v", err)
	}

	fail := func(step string, err error) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%s: %v (page problems: %v)", step, err, problems)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-tool="issue_refund"] .pressure`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-issue_refund canvas`)),
	); err != nil {
		fail("page load", err)
	}
	toolNames, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".card h3")].map(e => e.textContent).sort()`))
	if err != nil {
		fail("tool names", err)
	}
	if strings.Join(toolNames, ",") != "issue_refund,lookup_order" {
		t.Errorf("tools shown: %v", toolNames)
	}
	pressure, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`.card[data-tool="issue_refund"] .pressure`)))
	if err != nil {
		fail("pressure text", err)
	}
	if !strings.Contains(pressure, "close to timing out") || !strings.Contains(pressure, "1.0 s") {
		t.Errorf("pressure warning: %q", pressure)
	}
	counts, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`[document.querySelectorAll(".chart canvas").length,
		document.querySelectorAll('.card[data-tool="lookup_order"] .pressure').length]`))
	if err != nil {
		fail("charts", err)
	}
	if counts[0] != 2 {
		t.Errorf("%d charts rendered, want 2", counts[0])
	}
	if counts[1] != 0 {
		t.Errorf("lookup_order, far from its timeout, shows a pressure warning")
	}
	// The calls fill about a minute of the 1 h window: the chart zooms to
	// them (every point shown, the span far narrower than the window).
	xs, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](`(async () => {
		const s = await (await fetch("/v1/stats/series?tool=issue_refund&window=1h")).json();
		const host = document.getElementById("chart-issue_refund");
		const at = (p) => new Date(p.start).getTime() / 1000;
		return [Number(host.dataset.xMin), Number(host.dataset.xMax), at(s.points[0]), at(s.points[s.points.length - 1])];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		fail("chart range", err)
	}
	if lo, hi, first, last := xs[0], xs[1], xs[2], xs[3]; lo > first || hi <= last || hi-lo > 900 {
		t.Errorf("chart spans %.0f..%.0f (%.0f s) for points from %.0f to %.0f: want it zoomed to the data, under 15 min", lo, hi, hi-lo, first, last)
	}
	// The card and its chart agree: the window's p95 lies between the
	// steps' p95s (nearest rank over the same samples), and the card shows
	// refusals apart from the dependency's errors.
	agree, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](`(async () => {
		const st = await (await fetch("/v1/stats?window=1h")).json();
		const s = await (await fetch("/v1/stats/series?tool=issue_refund&window=1h")).json();
		const p95s = s.points.filter((p) => p.samples).map((p) => p.p95_ms);
		const card = document.querySelector('.card[data-tool="issue_refund"] .figs').textContent;
		return [st.tools.issue_refund.p95_ms, Math.min(...p95s), Math.max(...p95s),
			card.includes("refused") && card.includes("dependency errors") && card.includes("samples") ? 1 : 0];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		fail("card and chart", err)
	}
	if p95, lo, hi, labels := agree[0], agree[1], agree[2], agree[3]; p95 < lo*0.99 || p95 > hi*1.01 || labels != 1 {
		t.Errorf("card p95 %v ms outside its chart's p95s [%v, %v], or the card lacks refused/dependency errors/samples (%v)", p95, lo, hi, labels)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		fail("screenshot", err)
	}

	// The quota's use: 30 refunds of cust_42 out of 100.
	quotaRow, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#quotas tbody tr`)))
	if err != nil {
		fail("quotas panel", err)
	}
	if !strings.Contains(quotaRow, "refunds_per_customer") || !strings.Contains(quotaRow, "cust_42") || !strings.Contains(quotaRow, "70") {
		t.Errorf("quotas panel: %q, want refunds_per_customer for cust_42, 30 used, 70 left", quotaRow)
	}

	// The waiting approval is listed; Approve asks for a name and decides.
	listed, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#approvals .approval`)))
	if err != nil {
		fail("approvals panel", err)
	}
	if !strings.Contains(listed, "issue_refund") || !strings.Contains(listed, "5000") {
		t.Errorf("approvals panel: %q", listed)
	}
	dctx, stopDialogs := context.WithCancel(bctx)
	var prompts []string
	var dialogs sync.WaitGroup
	opening := chromedp.Events(dctx, page.JavascriptDialogOpening) // subscribed from here on
	dialogs.Go(func() {
		for ev, err := range opening {
			if err != nil {
				return
			}
			prompts = append(prompts, ev.Message)
			// Answered from another goroutine than the one reading events.
			dialogs.Go(func() {
				chromedp.Call(dctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: "dana"})
			})
		}
	})
	err = chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`#approvals .approval button.approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#approvals p.empty`)),
	)
	stopDialogs()
	dialogs.Wait()
	if err != nil {
		a, _ := gw.Approval(ctx, held.Meta.ApprovalID)
		fail("approve", fmt.Errorf("%w (prompts %q, approval %+v)", err, prompts, a))
	}
	if len(prompts) != 1 || !strings.Contains(prompts[0], held.Meta.ApprovalID) {
		t.Errorf("prompts shown: %q; want one naming %s", prompts, held.Meta.ApprovalID)
	}
	decided, err := gw.Approval(ctx, held.Meta.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if decided.Status != store.ApprovalApproved || decided.By != "dana" {
		t.Errorf("approval after the click: status %s by %q; want approved by dana", decided.Status, decided.By)
	}

	// A run's timeline opens on click.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`#execs button.run[data-run="run_demo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline li.fail`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-replay .badge`)),
	); err != nil {
		fail("run view", err)
	}
	items, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#timeline li").length`))
	if err != nil {
		fail("timeline", err)
	}
	if items != 62 {
		t.Errorf("timeline has %d entries, want 62", items)
	}
	replay, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#run-replay`)))
	if err != nil {
		fail("replay badge", err)
	}
	if !strings.Contains(replay, "replay matches") {
		t.Errorf("replay badge: %q", replay)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page reported errors: %v", problems)
	}
	path := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(path, shot, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	if dir := os.Getenv("TOOLGATE_SCREENSHOT_DIR"); dir != "" {
		os.WriteFile(filepath.Join(dir, "dashboard.png"), shot, 0o644)
	}
}

// The page declares its icon and both its path and /favicon.ico answer it,
// so no browser logs a 404 for it.
func TestIcon(t *testing.T) {
	ts := httptest.NewServer(dashboard.Handler())
	defer ts.Close()
	for _, path := range []string{"/favicon.ico", "/assets/favicon.svg"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/svg+xml") {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page strings.Builder
	if _, err := io.Copy(&page, resp.Body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<link rel="icon" href="/assets/favicon.svg"`) {
		t.Error("the page declares no icon")
	}
}
