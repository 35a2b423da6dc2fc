package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// executionPage is one answer of GET /v1/executions.
type executionPage struct {
	Executions []types.Execution `json:"executions"`
	NextCursor string            `json:"next_cursor"`
}

// callWithID makes one call with the given call_id.
func (p *proc) callWithID(runID, tool, args, callID string) {
	p.t.Helper()
	a := p.post("/v1/runs/"+runID+"/calls", supportKey, fmt.Sprintf(`{"tool":%q,"args":%s,"call_id":%q}`, tool, args, callID))
	if a.status != http.StatusOK {
		p.t.Fatalf("call %s: HTTP %d %s", tool, a.status, a.body)
	}
}

// page gets one page of GET /v1/executions with the given query.
func (p *proc) page(query string) executionPage {
	p.t.Helper()
	a := p.get("/v1/executions?"+query, supportKey)
	if a.status != http.StatusOK {
		p.t.Fatalf("GET /v1/executions?%s: HTTP %d %s", query, a.status, a.body)
	}
	var page executionPage
	if err := json.Unmarshal(a.body, &page); err != nil {
		p.t.Fatalf("page: %v\n%s", err, a.body)
	}
	return page
}

// auditCalls makes 25 calls on run "audit": every fifth a broken read
// (upstream_error), the others reads of an order (ok), with call ids
// orig-0 .. orig-24.
func auditCalls(t *testing.T, srv *proc) {
	t.Helper()
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"audit","principal":`+principal+`}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	for i := range 25 {
		if i%5 == 0 {
			srv.callWithID("audit", "broken_read", `{}`, fmt.Sprintf("orig-%d", i))
		} else {
			srv.callWithID("audit", "get_order", `{"order_id":"ORD-4471"}`, fmt.Sprintf("orig-%d", i))
		}
	}
}

// 25 calls read 10 at a time, with calls made between the pages, give the
// 25 rows exactly once each; the filters keep what they say.
func TestExecutionsPagingAndFilters(t *testing.T) {
	srv, _ := suite(t)
	auditCalls(t, srv)

	seen := map[string]int{}
	query := "limit=10"
	var sizes []int
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatalf("more pages than rows: %v", sizes)
		}
		p := srv.page(query)
		sizes = append(sizes, len(p.Executions))
		for _, e := range p.Executions {
			seen[e.CallID]++
		}
		if p.NextCursor == "" {
			break
		}
		// New rows arrive between the pages.
		for j := range 3 {
			srv.callWithID("audit", "get_order", `{"order_id":"ORD-4471"}`, fmt.Sprintf("new-%d-%d", page, j))
		}
		query = "limit=10&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if !slices.Equal(sizes, []int{10, 10, 5}) {
		t.Errorf("page sizes %v, want [10 10 5]", sizes)
	}
	for i := range 25 {
		if n := seen[fmt.Sprintf("orig-%d", i)]; n != 1 {
			t.Errorf("orig-%d read %d times, want once", i, n)
		}
	}
	for id, n := range seen {
		if !strings.HasPrefix(id, "orig-") {
			t.Errorf("%s, made while paging, read %d times: the pages shifted", id, n)
		}
	}

	all := srv.page("run=audit&limit=1000").Executions
	if len(all) != 31 {
		t.Fatalf("run audit holds %d rows, want 25 + 6", len(all))
	}
	// A window of finished_at: since inclusive, until exclusive.
	oldest := slices.Clone(all)
	slices.Reverse(oldest)
	since, until := oldest[10].FinishedAt, oldest[20].FinishedAt
	var wantWindow []string
	for _, e := range all {
		if !e.FinishedAt.Before(since) && e.FinishedAt.Before(until) {
			wantWindow = append(wantWindow, e.CallID)
		}
	}
	tests := []struct {
		name  string
		query string
		want  []string // call ids, newest first
	}{
		{"code", "run=audit&code=upstream_error", []string{"orig-20", "orig-15", "orig-10", "orig-5", "orig-0"}},
		{"tool", "tool=broken_read", []string{"orig-20", "orig-15", "orig-10", "orig-5", "orig-0"}},
		{"code and a cursor", "code=upstream_error&limit=2", []string{"orig-20", "orig-15"}},
		{"since and until", "run=audit&since=" + url.QueryEscape(since.Format(time.RFC3339Nano)) + "&until=" + url.QueryEscape(until.Format(time.RFC3339Nano)), wantWindow},
		{"no such code", "code=rate_limited", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range srv.page(tt.query).Executions {
				got = append(got, e.CallID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("call ids %v, want %v", got, tt.want)
			}
		})
	}
	if len(wantWindow) != 10 {
		t.Errorf("the window holds %d rows, want 10", len(wantWindow))
	}
	// Bad parameters are named, all at once.
	a := srv.get("/v1/executions?since=yesterday&limit=5000&cursor=nope", supportKey)
	if a.status != http.StatusBadRequest || !bytes.Contains(a.body, []byte(`since \"yesterday\"`)) ||
		!bytes.Contains(a.body, []byte("limit")) || !bytes.Contains(a.body, []byte("cursor")) {
		t.Errorf("bad parameters: %d %s", a.status, a.body)
	}
}

// export runs `toolgate executions export` on the server's config and
// returns its standard output, standard error and exit code.
func (p *proc) export(args ...string) (stdout, stderr string, code int) {
	p.t.Helper()
	cmd := exec.Command(binary, append([]string{"executions", "export", "--config", filepath.Join(p.dir, "toolgate.yaml")}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		p.t.Fatalf("export: %v", err)
	}
	return out.String(), errOut.String(), code
}

// The export writes every matching row once, in JSON lines or CSV, beside
// a running server, with its progress on standard error.
func TestExecutionsExport(t *testing.T) {
	srv, _ := suite(t)
	auditCalls(t, srv)

	file := filepath.Join(t.TempDir(), "audit.jsonl")
	stdout, stderr, code := srv.export("--format", "jsonl", "--key", "support-bot", "--run", "audit", "--page-size", "10", "--output", file)
	if code != 0 || stdout != "" {
		t.Fatalf("export: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	for _, want := range []string{"exported 10 rows so far", "exported 20 rows so far", "exported 25 rows to " + file} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	seen := map[string]int{}
	for _, line := range lines {
		var e types.Execution
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if e.RunID != "support-bot/audit" || len(e.Result) == 0 { // stored under its key
			t.Errorf("row %+v", e)
		}
		seen[e.CallID]++
	}
	if len(lines) != 25 || len(seen) != 25 {
		t.Errorf("%d lines of %d call ids, want 25 rows once each", len(lines), len(seen))
	}

	stdout, stderr, code = srv.export("--format", "csv", "--code", "upstream_error", "--quiet")
	if code != 0 || stderr != "" {
		t.Fatalf("csv export: exit %d, stderr %q", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, stdout)
	}
	if len(records) != 6 || records[0][0] != "id" || !slices.Contains(records[0], "code") {
		t.Fatalf("csv: want a header and 5 rows, got %d records:\n%s", len(records), stdout)
	}
	codeCol := slices.Index(records[0], "code")
	argsCol := slices.Index(records[0], "args")
	for _, r := range records[1:] {
		if r[codeCol] != "upstream_error" || r[argsCol] != "{}" {
			t.Errorf("csv row %v", r)
		}
	}

	// An empty window still gives a CSV header.
	stdout, _, code = srv.export("--format", "csv", "--until", "2000-01-01T00:00:00Z", "--quiet")
	if code != 0 || strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, "id,run_id,") {
		t.Errorf("empty export: exit %d, %q", code, stdout)
	}
	// Bad flags are usage errors that name the problem.
	for _, args := range [][]string{
		{"--format", "xml"},
		{"--format", "jsonl", "--since", "yesterday"},
	} {
		_, stderr, code := srv.export(args...)
		if code != 2 || !(strings.Contains(stderr, "xml") || strings.Contains(stderr, `since "yesterday"`)) {
			t.Errorf("export %v: exit %d, %s", args, code, stderr)
		}
	}
}
