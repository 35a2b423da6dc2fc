package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/config"
)

const (
	danaKey  = "dana-key-0123456789abcdef"
	agentKey = "agent-key-0123456789abcdef"
)

// Without a key the console shows a sign-in box and sends no request to
// the API (so the server logs nothing per poll); signed in with an
// approver key kept in session storage, it shows the figures, and the run
// page of another key's run opens from the runs list.
func TestSignIn(t *testing.T) {
	exe := chromium(t)
	e := stack(t, config.Key{Name: "dana", Key: danaKey, Approver: true}, config.Key{Name: "agent", Key: agentKey})
	resp, err := e.ts.Client().Post(e.ts.URL+"/v1/runs", "application/json",
		strings.NewReader(`{"run_id":"agent_run","principal":{"id":"cust_9"}}`))
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("a run opened without a key: %v %v, want 401", err, resp)
	}
	req, _ := newRequest(e.ts.URL+"/v1/runs", agentKey, `{"run_id":"agent_run","principal":{"id":"cust_9"}}`)
	if resp, err := e.ts.Client().Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("the agent's run: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	req, _ = newRequest(e.ts.URL+"/v1/runs/agent_run/calls", agentKey, `{"tool":"lookup_order","args":{"n":1}}`)
	if resp, err := e.ts.Client().Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the agent's call: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	before := e.api.Load()
	p := openBrowser(t, exe, 1400, 900)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(e.ts.URL+"/runs"), chromedp.WaitVisible(chromedp.CSS(`#signin #key`))); err != nil {
		t.Fatalf("sign-in box: %v (%v)", err, p.Problems())
	}
	hidden, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.getElementById("view-runs").hidden && document.getElementById("view-overview").hidden`))
	if err != nil || !hidden {
		t.Errorf("the views show beside the sign-in box (%v)", err)
	}
	if n := e.api.Load() - before; n != 0 {
		t.Errorf("the page sent %d API requests before it had a key, want none", n)
	}
	if log := e.log.String(); strings.Contains(log, "level=WARN") {
		t.Errorf("the server warned while a tab had no key:\n%s", log)
	}
	// A wrong key: told so, the box stays.
	if err := chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.CSS(`#key`), "not-a-key-of-this-server"), chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#signin #key`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`document.getElementById("signin-error").textContent.includes("did not accept")`)); err != nil {
		t.Errorf("no word about the refused key: %v", err)
	}
	// The right one: the runs list, with the agent's run, links to its page.
	if err := chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.CSS(`#key`), danaKey), chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#runs tbody tr[data-run="agent_run"]`)),
		chromedp.Click(chromedp.CSS(`#runs tr[data-run="agent_run"] a.runid`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-replay .badge`))); err != nil {
		t.Fatalf("signed in: %v (%v)", err, p.Problems())
	}
	// Its raw rows, read as dana with key=agent.
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#raw > summary`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`document.querySelector("#raw pre").textContent.includes('"run_id": "agent_run"')`)); err != nil {
		raw, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("#raw pre").textContent`))
		t.Errorf("raw rows of the agent's run: %v: %.300s", err, raw)
	}
	stored, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[sessionStorage.getItem("toolgate.key") || "", String(localStorage.length), location.pathname + location.search]`))
	if err != nil || stored[0] != danaKey || stored[1] != "0" || stored[2] != "/runs/agent_run?key=agent" {
		t.Errorf("key in session storage, none in local storage, the run's address: %q (%v)", stored, err)
	}
	// One 401 was expected: the wrong key's.
	var other []string
	for _, pr := range p.Problems() {
		if !strings.Contains(pr, "401") {
			other = append(other, pr)
		}
	}
	if len(other) > 0 || len(p.Problems()) > 2 {
		t.Errorf("the page reported errors: %v", p.Problems())
	}
}
