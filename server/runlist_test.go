package server

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// listPages follows next_cursor from path and returns every run id (as
// KEY/ID when the entry names its key) and the cursors it was given.
func listPages(b *bundle, path, key string) (ids, cursors []string) {
	b.t.Helper()
	for page := 0; page < 20; page++ {
		resp := b.get(path, key)
		if resp.status != http.StatusOK {
			b.t.Fatalf("GET %s: %d %s", path, resp.status, resp.body)
		}
		var list RunList
		resp.decode(b.t, &list)
		for _, r := range list.Runs {
			ids = append(ids, r.Key+"/"+r.RunID)
		}
		if list.NextCursor == "" {
			return ids, cursors
		}
		cursors = append(cursors, list.NextCursor)
		base, _, _ := strings.Cut(path, "&cursor=")
		path = base + "&cursor=" + url.QueryEscape(list.NextCursor)
	}
	b.t.Fatal("more than 20 pages")
	return nil, nil
}

// GET /v1/runs lists the caller's runs newest first, two a page; another
// key's cursor, an edited one and one from other filters are refused; an
// approver key sees every key's runs.
func TestListRunsPerKey(t *testing.T) {
	b := setup(t, setupOpts{config: func(c *config.Config) {
		c.Auth.Keys = append(c.Auth.Keys, config.Key{Name: "ops", Key: opsKey, Approver: true})
	}})
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		b.startRun(alphaKey, `{"run_id":"`+id+`","principal":{"id":"cust_42"}}`)
	}
	for _, id := range []string{"p1", "p2", "q"} {
		b.startRun(betaKey, `{"run_id":"`+id+`","principal":{"id":"cust_7"}}`)
	}
	if resp := b.post("/v1/runs/p3/calls", alphaKey, `{"tool":"echo","args":{"n":1}}`); resp.status != http.StatusOK {
		t.Fatalf("call: %d %s", resp.status, resp.body)
	}

	ids, cursors := listPages(b, "/v1/runs?limit=2", alphaKey)
	want := []string{"alpha/p5", "alpha/p4", "alpha/p3", "alpha/p2", "alpha/p1"}
	if !slices.Equal(ids, want) || len(cursors) != 2 {
		t.Fatalf("alpha's pages: %q with %d cursors, want %q in 3 pages", ids, len(cursors), want)
	}
	_, betaCursors := listPages(b, "/v1/runs?limit=2", betaKey)
	edited := []byte(cursors[0])
	edited[0] ^= 1
	for name, path := range map[string]string{
		"beta's cursor":  "/v1/runs?limit=2&cursor=" + url.QueryEscape(betaCursors[0]),
		"edited cursor":  "/v1/runs?limit=2&cursor=" + url.QueryEscape(string(edited)),
		"other filters":  "/v1/runs?limit=2&principal=cust_42&cursor=" + url.QueryEscape(cursors[0]),
		"garbage cursor": "/v1/runs?cursor=abc",
	} {
		resp := b.get(path, alphaKey)
		if res := resp.envelope(t); resp.status != http.StatusBadRequest || !strings.Contains(res.Error.Message, "not a next_cursor this key was given") {
			t.Errorf("%s: %d %s", name, resp.status, resp.body)
		}
	}
	for path, want := range map[string]string{
		"/v1/runs?page=2":         "page",
		"/v1/runs?since=tomorrow": "since",
		"/v1/runs?limit=0":        "limit",
	} {
		resp := b.get(path, alphaKey)
		if res := resp.envelope(t); resp.status != http.StatusBadRequest || !strings.Contains(res.Error.Message, want) {
			t.Errorf("GET %s: %d %s, want 400 naming %s", path, resp.status, resp.body, want)
		}
	}
	if resp := b.get("/v1/runs?key=beta", alphaKey); resp.status != http.StatusForbidden {
		t.Errorf("alpha asking for beta's runs: %d %s", resp.status, resp.body)
	}
	for path, want := range map[string][]string{
		"/v1/runs?tool=echo&outcome=ok": {"alpha/p3"},
		"/v1/runs?q=P&since=1h":         {"alpha/p5", "alpha/p4", "alpha/p3", "alpha/p2", "alpha/p1"},
	} {
		if got, _ := listPages(b, path, alphaKey); !slices.Equal(got, want) {
			t.Errorf("GET %s: %q, want %q", path, got, want)
		}
	}
	all, _ := listPages(b, "/v1/runs?limit=3", opsKey)
	if len(all) != 8 {
		t.Errorf("the approver key sees %q, want all 8 runs", all)
	}
	if got, _ := listPages(b, "/v1/runs?key=beta", opsKey); !slices.Equal(got, []string{"beta/q", "beta/p2", "beta/p1"}) {
		t.Errorf("the approver key's key=beta: %q", got)
	}
}
