package dashboard_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var screenshots = flag.Bool("screenshots", false, "write the console's screenshots to docs/img (TestScreenshots)")

// seed makes the calls the console shows: run_demo (60 calls, a typo and a
// refund held for approval) and refund_incident (a refund whose outcome is
// unknown, then its repeat, settled by the verify read). It returns the
// held call.
func seed(t *testing.T, e *env) *toolgate.Result {
	t.Helper()
	ctx := context.Background()
	run, err := e.gw.StartRun(ctx, toolgate.RunOptions{ID: "run_demo", Principal: toolgate.Principal{ID: "cust_42"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		e.gw.Call(ctx, run.ID, "lookup_order", map[string]any{"n": i})
		e.gw.Call(ctx, run.ID, "issue_refund", map[string]any{"n": i})
	}
	e.gw.Call(ctx, run.ID, "lookup_ordr", map[string]any{})                        // a typo: one refusal in the history
	held, err := e.gw.Call(ctx, run.ID, "issue_refund", map[string]any{"n": 5000}) // held for a person
	if err != nil || held.Code() != types.CodeApprovalRequired {
		t.Fatalf("a large refund: %v, %+v; want approval_required", err, held)
	}
	inc, err := e.gw.StartRun(ctx, toolgate.RunOptions{ID: "refund_incident", Principal: toolgate.Principal{ID: "cust_7"}})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"order_id": "ORD-4471", "amount_paise": 425000}
	first, err := e.gw.Call(ctx, inc.ID, "send_refund", args)
	if err != nil || first.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("the first refund: %v, %+v; want an unknown outcome", err, first)
	}
	e.landed.Store(true)
	e.gw.Call(ctx, inc.ID, "lookup_order", map[string]any{"n": 4471})
	again, err := e.gw.Call(ctx, inc.ID, "send_refund", args)
	if err != nil || !again.OK || !again.Meta.Verified {
		t.Fatalf("the repeat: %v, %+v; want ok, settled by the verify read", err, again)
	}
	return held
}

// sizes are the windows the console must read well in: a laptop and a phone.
var sizes = []struct{ w, h int }{{1400, 900}, {390, 844}}

// Every view loads by its URL, at a laptop's and a phone's size, with no
// console error, no failed request and no placeholder text; the run page
// of the refund incident links the unknown outcome to the step that
// settled it, shows the arguments and draws the timing bars.
func TestConsoleByURL(t *testing.T) {
	exe := chromium(t)
	e := stack(t)
	seed(t, e)
	views := []struct{ name, path, ready string }{
		{"overview", "/", `.card[data-tool="issue_refund"] .chart canvas`},
		{"runs", "/runs", `#runs tbody tr[data-run="refund_incident"]`},
		{"run", "/runs/refund_incident", `#step-3 .bar`},
	}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			p := openBrowser(t, exe, size.w, size.h)
			for _, v := range views {
				if err := chromedp.Do(p.ctx, chromedp.Navigate(e.ts.URL+v.path), chromedp.WaitVisible(chromedp.CSS(v.ready))); err != nil {
					t.Fatalf("%s: %v (page problems: %v)", v.name, err, p.Problems())
				}
				if found := shownPlaceholders(t, p); len(found) > 0 {
					t.Errorf("%s shows placeholder text: %v", v.name, found)
				}
				overflow, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
				if err != nil || overflow > 0 {
					t.Errorf("%s is %d px wider than the window (%v)", v.name, overflow, err)
				}
			}
			checkRunPage(t, p)
			if problems := p.Problems(); len(problems) > 0 {
				t.Errorf("the page reported errors: %v", problems)
			}
		})
	}
}

// checkRunPage checks, through the DOM, the run page of the refund
// incident that is showing: step 1 (unknown outcome) links to step 3 and
// back, the arguments are there pretty-printed, and each step's bar sits
// on the one time axis where its call ran.
func checkRunPage(t *testing.T, p *tab) {
	t.Helper()
	type runPage struct {
		Forward, Back, Unknown string
		Args                   string
		Bars                   [][2]float64
		Attempts               []int
		Approvals, Took        string
	}
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[runPage](`(() => {
		const bar = (li) => { const b = li.querySelector(".bar"); return [parseFloat(b.style.left), parseFloat(b.style.width)]; };
		const steps = [...document.querySelectorAll("#trace li.step")];
		const link = (sel) => { const a = document.querySelector(sel); return a ? a.textContent + " " + a.getAttribute("href") : "no link"; };
		return {
			Forward: link("#step-1 a.settle"),
			Back: link("#step-3 a.settle"),
			Unknown: document.querySelector("#step-1").className,
			Args: document.querySelector("#step-1 details.args pre").textContent,
			Bars: steps.map(bar),
			Attempts: steps.map((li) => li.querySelectorAll(".bar .attempt").length),
			Approvals: document.querySelector("#run-approvals").innerText,
			Took: document.querySelector("#step-3 .took").innerText,
		};
	})()`))
	if err != nil {
		t.Fatalf("run page: %v", err)
	}
	if got.Forward != "step 3 #step-3" || got.Back != "step 1 #step-1" || !strings.Contains(got.Unknown, "unknown") {
		t.Errorf("the link between the unknown outcome and the step that settled it: forward %q, back %q, step 1 class %q", got.Forward, got.Back, got.Unknown)
	}
	if !strings.Contains(got.Args, "\"order_id\": \"ORD-4471\"") || !strings.Contains(got.Args, "\n") {
		t.Errorf("step 1's arguments, pretty-printed: %q", got.Args)
	}
	// 5 s, then 40 ms, then 180 ms (the verify read) on one axis: the first
	// bar starts at 0 and fills most of it, the others follow it.
	if len(got.Bars) != 3 {
		t.Fatalf("bars: %v, want 3", got.Bars)
	}
	b1, b2, b3 := got.Bars[0], got.Bars[1], got.Bars[2]
	if b1[0] != 0 || b1[1] < 90 || b2[0] < b1[0]+b1[1]-0.01 || b3[0] < b2[0] || b3[0]+b3[1] > 100.01 {
		t.Errorf("bars [left%%, width%%]: %v; want step 1 from 0 over 90%%, then 2 and 3 after it, within the axis", got.Bars)
	}
	// Step 3 sent nothing: its verify read settled it.
	if got.Attempts[0] != 1 || got.Attempts[2] != 0 || !strings.Contains(got.Took, "no attempt") {
		t.Errorf("attempts drawn in the bars: %v, step 3 %q", got.Attempts, got.Took)
	}
	if !strings.Contains(got.Approvals, "No call of this run asked for approval.") {
		t.Errorf("the run's approvals: %q", got.Approvals)
	}
	// The keyboard: Enter on a focused step opens it; Tab moves on to the
	// next step, which shows a focus ring.
	if err := chromedp.Do(p.ctx, chromedp.Focus(chromedp.CSS(`#step-2 > details > summary`)), chromedp.KeyEvent("\r"), chromedp.KeyEvent("\t")); err != nil {
		t.Fatalf("keyboard: %v", err)
	}
	keys, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[String(document.querySelector("#step-2 > details").open),
		document.activeElement.closest("li.step") ? document.activeElement.closest("li.step").id : document.activeElement.tagName,
		getComputedStyle(document.activeElement).outlineStyle]`))
	if err != nil || keys[0] != "true" || keys[2] == "none" {
		t.Errorf("keyboard on the trace: step 2 opened %s, focus on %s with outline %s (%v); want opened, a visible ring", keys[0], keys[1], keys[2], err)
	}
	// Following the link opens the step it points to.
	open, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`(() => { document.querySelector('#step-1 a.settle').click(); return document.querySelector("#step-3 details").open; })()`))
	if err != nil || !open {
		t.Errorf("following the link from step 1 did not open step 3 (%v)", err)
	}
}

// The overview's figures: headline counts, tool cards with refusals apart
// from the dependency's failures, charts zoomed to the data that agree
// with their cards; the runs list finds a run by search and links to its
// page; a waiting approval is decided from the page.
func TestOverviewAndRuns(t *testing.T) {
	exe := chromium(t)
	e := stack(t)
	held := seed(t, e)
	p := openBrowser(t, exe, 1400, 900)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`.card[data-tool="issue_refund"] .pressure`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-issue_refund canvas`))); err != nil {
		t.Fatalf("overview: %v (%v)", err, p.Problems())
	}
	tiles, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#headline .tile")].map((t) => t.querySelector("b").textContent + " " + t.querySelector("span").textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// 66 calls: 60 + the typo + the held refund + the incident's 3 + its
	// verify read is part of the repeat, not a call. 31 refunds committed
	// (30 + the verified repeat); the unknown one is settled; 1 approval.
	want := []string{"65 calls", "31 effects committed", "0 unknown outcomes waiting", "1 approvals waiting", "0 breakers open"}
	if strings.Join(tiles, ",") != strings.Join(want, ",") {
		t.Errorf("headline: %q, want %q", tiles, want)
	}
	pressure, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(`.card[data-tool="issue_refund"] .pressure`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pressure, "close to timing out") || !strings.Contains(pressure, "within 70 ms") {
		t.Errorf("pressure warning: %q", pressure)
	}
	// The calls fill about a minute of the 1 h window: the chart zooms to
	// them; the card's p95 lies between the steps' p95s.
	agree, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]float64](`(async () => {
		const st = await (await fetch("/v1/stats?window=1h")).json();
		const s = await (await fetch("/v1/stats/series?tool=issue_refund&window=1h")).json();
		const host = document.getElementById("chart-issue_refund");
		const at = (p) => new Date(p.start).getTime() / 1000;
		const p95s = s.points.filter((p) => p.samples).map((p) => p.p95_ms);
		const card = document.querySelector('.card[data-tool="issue_refund"] .figs').textContent;
		return [Number(host.dataset.xMin), Number(host.dataset.xMax), at(s.points[0]), at(s.points[s.points.length - 1]),
			st.tools.issue_refund.p95_ms, Math.min(...p95s), Math.max(...p95s),
			card.includes("refused by toolgate") && card.includes("failed at dependency") ? 1 : 0];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, first, last := agree[0], agree[1], agree[2], agree[3]; lo > first || hi <= last || hi-lo > 900 {
		t.Errorf("chart spans %.0f..%.0f (%.0f s) for points from %.0f to %.0f: want it zoomed to the data, under 15 min", lo, hi, hi-lo, first, last)
	}
	if p95, lo, hi, labels := agree[4], agree[5], agree[6], agree[7]; p95 < lo*0.99 || p95 > hi*1.01 || labels != 1 {
		t.Errorf("card p95 %v ms outside its chart's p95s [%v, %v], or the card mixes refusals and dependency failures (%v)", p95, lo, hi, labels)
	}
	// lookup_order answers in 40 ms against a 2 s timeout: its chart fits
	// the 40 ms and names the timeout instead of flattening the data under
	// it; issue_refund's draws its 1 s timeout.
	legends, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`["lookup_order", "issue_refund"].map((n) => document.querySelector('.card[data-tool="' + n + '"] .legend').innerText.replace(/\s+/g, " "))`))
	if err != nil || !strings.Contains(legends[0], "read timeout 2.0 s, above the scale") || !strings.Contains(legends[1], "p99 read timeout 1.0 s") {
		t.Errorf("legends: %q (%v)", legends, err)
	}
	quotaRow, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(`#quotas tbody tr`)))
	if err != nil || !strings.Contains(quotaRow, "refunds_per_customer") || !strings.Contains(quotaRow, "70") {
		t.Errorf("quotas panel: %q (%v), want refunds_per_customer for cust_42, 30 used, 70 left", quotaRow, err)
	}
	approve(t, p, e, held)

	// The runs list: newest first, searched from its form, linking to the
	// run's page without a reload.
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`header nav a[data-view="runs"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#runs tbody tr[data-run="run_demo"]`))); err != nil {
		t.Fatalf("runs list: %v", err)
	}
	order, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#runs tbody tr")].map((r) => r.dataset.run)`))
	if err != nil || strings.Join(order, ",") != "refund_incident,run_demo" {
		t.Errorf("runs listed: %v (%v), want the newest first", order, err)
	}
	if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.CSS(`#r-q`), "cust_7"), chromedp.Click(chromedp.CSS(`#runs-form button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#runs tbody tr[data-run="run_demo"]`))); err != nil {
		t.Fatalf("search: %v", err)
	}
	where, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	if err != nil || where != "/runs?q=cust_7" {
		t.Errorf("the search's address: %q (%v)", where, err)
	}
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#runs a.runid`)), chromedp.WaitVisible(chromedp.CSS(`#step-3 .bar`))); err != nil {
		t.Fatalf("run page from the list: %v", err)
	}
	// The held refund's run shows its approval, decided by dana.
	if err := chromedp.Do(p.ctx, chromedp.Navigate(e.ts.URL+"/runs/run_demo"), chromedp.WaitVisible(chromedp.CSS(`#run-approvals li`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-replay .badge`))); err != nil {
		t.Fatalf("run_demo: %v", err)
	}
	texts, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[document.querySelector("#run-approvals").innerText, document.querySelector("#run-replay").innerText, String(document.querySelectorAll("#trace li.step").length)]`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(texts[0], "approved by dana") || !strings.Contains(texts[1], "replay matches") || texts[2] != "62" {
		t.Errorf("run_demo: approvals %q, replay %q, %s steps (want approved by dana, replay matches, 62)", texts[0], texts[1], texts[2])
	}
	if problems := p.Problems(); len(problems) > 0 {
		t.Errorf("the page reported errors: %v", problems)
	}
}

// approve decides the waiting approval from the overview: Approve asks for
// a name and records it.
func approve(t *testing.T, p *tab, e *env, held *toolgate.Result) {
	t.Helper()
	dctx, stop := context.WithCancel(p.ctx)
	var prompts []string
	var dialogs sync.WaitGroup
	opening := chromedp.Events(dctx, page.JavascriptDialogOpening)
	dialogs.Go(func() {
		for ev, err := range opening {
			if err != nil {
				return
			}
			prompts = append(prompts, ev.Message)
			dialogs.Go(func() {
				chromedp.Call(dctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: "dana"})
			})
		}
	})
	err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#approvals .approval button.approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#approvals p.empty`)))
	stop()
	dialogs.Wait()
	if err != nil {
		t.Fatalf("approve: %v (prompts %q)", err, prompts)
	}
	if len(prompts) != 1 || !strings.Contains(prompts[0], held.Meta.ApprovalID) {
		t.Errorf("prompts shown: %q; want one naming %s", prompts, held.Meta.ApprovalID)
	}
	decided, err := e.gw.Approval(context.Background(), held.Meta.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if decided.Status != store.ApprovalApproved || decided.By != "dana" {
		t.Errorf("approval after the click: status %s by %q; want approved by dana", decided.Status, decided.By)
	}
}

// TestScreenshots writes docs/img/console-{overview,runs,run}.png when run
// with -screenshots (go test ./dashboard -run TestScreenshots -screenshots).
func TestScreenshots(t *testing.T) {
	if !*screenshots {
		t.Skip("run with -screenshots to write docs/img/console-*.png")
	}
	exe := chromium(t)
	e := stack(t)
	seed(t, e)
	p := openBrowser(t, exe, 1200, 800)
	for _, v := range []struct{ name, path, ready string }{
		{"overview", "/", `#chart-issue_refund canvas`},
		{"runs", "/runs", `#runs tbody tr[data-run="refund_incident"]`},
		{"run", "/runs/refund_incident", `#step-3 .bar`},
	} {
		if err := chromedp.Do(p.ctx, chromedp.Navigate(e.ts.URL+v.path), chromedp.WaitVisible(chromedp.CSS(v.ready))); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if v.name == "run" {
			if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector("#step-1 details").open = true`)); err != nil {
				t.Fatal(err)
			}
		}
		shot, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		path := filepath.Join("..", "docs", "img", "console-"+v.name+".png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", path, len(shot))
	}
}

// The page declares its icon and both its path and /favicon.ico answer it,
// so no browser logs a 404 for it; /runs and /runs/ID answer the page, so
// a run's address can be reloaded and shared.
func TestIconAndPages(t *testing.T) {
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
	for _, path := range []string{"/", "/runs", "/runs/run_demo"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, err = io.Copy(&body, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), `<link rel="icon" href="/assets/favicon.svg"`) ||
			!strings.Contains(body.String(), `<script src="/assets/app.js">`) {
			t.Errorf("GET %s: %d, not the console's page", path, resp.StatusCode)
		}
	}
}
