package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/server"
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

// env is a toolgate with stats, the API and the console, in process.
type env struct {
	ts  *httptest.Server
	gw  *toolgate.Gateway
	clk *clock.Fake
	// api counts the requests to /v1/ the server received.
	api atomic.Int64
	log *syncBuffer
	// landed is set once the incident's first refund shows at the
	// provider: it lands after its call gave up, as in the incident.
	landed atomic.Bool
}

// syncBuffer is a bytes.Buffer for a logger written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// stack starts toolgate on a fake clock: each tool moves the clock on by
// its latency, so the figures are exact and nothing sleeps. issue_refund
// answers in 930 ms against a 1 s read timeout (under timeout pressure);
// send_refund is the refund incident: its call fails after 5 s without an
// answer and its verify read, list_refunds, does not show the refund yet
// (outcome unknown); once it lands (env.landed), the repeat's verify read
// finds it. keys, when set, are the
// API's keys.
func stack(t *testing.T, keys ...config.Key) *env {
	t.Helper()
	e := &env{clk: clock.NewFake(time.Now().Truncate(time.Second)), log: &syncBuffer{}}
	latency := func(d time.Duration) config.Func {
		return func(ctx context.Context, args json.RawMessage) (any, error) {
			e.clk.Advance(d)
			return map[string]any{"ok": true}, nil
		}
	}
	sendRefund := func(ctx context.Context, args json.RawMessage) (any, error) {
		e.clk.Advance(5 * time.Second)
		return nil, errors.New("payments did not answer within 5 s")
	}
	listRefunds := func(ctx context.Context, args json.RawMessage) (any, error) {
		e.clk.Advance(180 * time.Millisecond)
		list := []any{}
		if e.landed.Load() {
			list = append(list, map[string]any{"refund_id": "RF-99203", "amount_paise": 425000})
		}
		return map[string]any{"refunds": list}, nil
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	orderSchema := map[string]any{"type": "object", "required": []any{"order_id"}, "properties": map[string]any{
		"order_id": map[string]any{"type": "string"}, "amount_paise": map[string]any{"type": "integer"}}}
	cfg := &config.Config{Store: "memory", Tools: map[string]*config.Tool{
		"lookup_order": {Description: "Look up an order.", Effect: types.EffectRead, InputSchema: schema,
			Timeout: config.Timeout{Read: config.Duration(2 * time.Second)}, Func: latency(40 * time.Millisecond)},
		"issue_refund": {Description: "Refund an order.", Effect: types.EffectWrite, InputSchema: schema,
			Timeout: config.Timeout{Read: config.Duration(time.Second)}, Func: latency(930 * time.Millisecond),
			Rules:  []config.Rule{{Deny: "args.n >= 1000", Approval: true, Message: "Refunds of 1000 or more need a person's approval; wait for it."}},
			Quotas: []config.Quota{{Name: "refunds_per_customer", Limit: 100, Window: config.Duration(time.Hour)}}},
		"send_refund": {Description: "Send a refund to the payment provider.", Effect: types.EffectWrite, InputSchema: orderSchema,
			Timeout: config.Timeout{Read: config.Duration(10 * time.Second)}, Func: sendRefund,
			Verify: &config.Lookup{Lookup: "list_refunds", Args: map[string]string{"order_id": "args.order_id"},
				Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
				Result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"},
			State: map[string]string{"refund_id": "result.refund_id"}},
		"list_refunds": {Description: "List an order's refunds.", Effect: types.EffectRead, InputSchema: orderSchema,
			Timeout: config.Timeout{Read: config.Duration(2 * time.Second)}, Func: listRefunds},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	st := memory.NewWithClock(e.clk.Now)
	agg, err := stats.New(context.Background(), &stats.Config{Store: st, Tools: cfg, Replica: "test", Clock: e.clk, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(e.log, nil))
	e.gw, err = toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: st, Clock: e.clk,
		Sinks: []toolgate.Sink{agg}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	page := dashboard.Handler()
	mounts := []server.Mount{
		{Pattern: "GET /v1/breakers", Handler: dashboard.Breakers(e.gw.Breakers)},
		{Pattern: "GET /v1/stats", Handler: http.HandlerFunc(agg.ServeStats)},
		{Pattern: "GET /v1/stats/series", Handler: http.HandlerFunc(agg.ServeSeries)},
		{Pattern: "GET /v1/alerts", Handler: http.HandlerFunc(agg.ServeAlerts)},
	}
	for _, p := range dashboard.Patterns {
		mounts = append(mounts, server.Mount{Pattern: p, Handler: page, Public: true})
	}
	srv, err := server.New(server.Options{Gateway: e.gw, Logger: logger, Keys: keys, Mounts: mounts})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	e.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			e.api.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		e.ts.Close()
		agg.Close(context.Background())
		e.gw.Close()
	})
	return e
}

// tab is one Chromium tab with what it reported going wrong: console
// errors, exceptions, failed requests and answers of 400 or more.
type tab struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func (p *tab) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

func openBrowser(t *testing.T, exe string, width, height int) *tab {
	t.Helper()
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(width, height))...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	bctx, cancel = context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(cancel)
	p := &tab{ctx: bctx}
	err := chromedp.Listen(bctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			p.problems = append(p.problems, fmt.Sprintf("exception: %s (%s:%d)", exceptionText(e.ExceptionDetails), e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				p.problems = append(p.problems, "console.error: "+strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			// The browser's own console errors: a resource that failed to
			// load (a 404 favicon), a CSP violation, a network error.
			if e.Entry.Level == cdplog.EntryLevelError {
				p.problems = append(p.problems, fmt.Sprintf("console %s error: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				p.problems = append(p.problems, fmt.Sprintf("HTTP %d for %s", e.Response.Status, e.Response.URL))
			}
		case *network.EventLoadingFailed:
			if !e.Canceled {
				p.problems = append(p.problems, fmt.Sprintf("loading failed: %s (%s)", e.ErrorText, e.Type))
			}
		}
	})
	if err != nil {
		t.Fatalf("chromium did not start: %v", err)
	}
	// Headless Chromium keeps its window at least 500 px wide: the
	// viewport is set, so that 390 px is 390 px.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	if w, err := chromedp.Run(bctx, chromedp.Evaluate[int](`window.innerWidth`)); err != nil || w != width {
		t.Fatalf("the page is %d px wide (%v), want %d", w, err, width)
	}
	return p
}

// placeholders are the texts a page must never show: a value that was
// missing (undefined, null, NaN) or uPlot's empty legend (--).
var placeholders = []string{"--", "NaN", "undefined", "null"}

// shownPlaceholders returns the placeholders in the page's visible text.
func shownPlaceholders(t *testing.T, p *tab) []string {
	t.Helper()
	text, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatalf("page text: %v", err)
	}
	var found []string
	for _, ph := range placeholders {
		if i := strings.Index(text, ph); i >= 0 {
			found = append(found, fmt.Sprintf("%q in %q", ph, text[max(0, i-60):min(len(text), i+60)]))
		}
	}
	return found
}

// exceptionText is an uncaught exception's message.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// newRequest is a POST of body with key as its bearer.
func newRequest(url, key, body string) (*http.Request, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
