package server

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

func TestParseExecutionQuery(t *testing.T) {
	nine := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		query string
		want  types.ExecutionFilter
		says  []string // the error names these; none means no error
	}{
		{"defaults", "", types.ExecutionFilter{Limit: DefaultListLimit}, nil},
		{"every filter", "run=r1&tool=get_order&code=upstream_error&since=2026-12-01T09:00:00Z&until=2026-12-01T10:00:00.5%2B01:00&limit=1000",
			types.ExecutionFilter{RunID: "r1", Tool: "get_order", Code: types.CodeUpstreamError, Since: nine,
				Until: time.Date(2026, 12, 1, 9, 0, 0, 5e8, time.UTC), Limit: 1000}, nil},
		{"a cursor", "cursor=" + encodeCursor(42), types.ExecutionFilter{Limit: DefaultListLimit, BeforeID: 42}, nil},
		{"limit zero", "limit=0", types.ExecutionFilter{}, []string{`limit "0"`, "1 to 1000"}},
		{"limit over the cap", "limit=1001", types.ExecutionFilter{}, []string{`limit "1001"`}},
		{"since not RFC 3339", "since=yesterday", types.ExecutionFilter{}, []string{`since "yesterday"`, "RFC 3339"}},
		{"until a date only", "until=2026-12-01", types.ExecutionFilter{}, []string{`until "2026-12-01"`}},
		{"since after until", "since=2026-12-01T10:00:00Z&until=2026-12-01T09:00:00Z", types.ExecutionFilter{}, []string{"not before until"}},
		{"code of another shape", "code=Upstream-Error", types.ExecutionFilter{}, []string{`code "Upstream-Error"`}},
		{"cursor made up", "cursor=42", types.ExecutionFilter{}, []string{`cursor "42"`, "next_cursor"}},
		{"cursor of a zero id", "cursor=" + encodeCursor(0), types.ExecutionFilter{}, []string{"cursor"}},
		{"every problem at once", "limit=x&since=x&code=X", types.ExecutionFilter{}, []string{"limit", "since", "code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseExecutionQuery(q)
			if len(tt.says) == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !got.Since.Equal(tt.want.Since) || !got.Until.Equal(tt.want.Until) {
					t.Errorf("since/until %v %v, want %v %v", got.Since, got.Until, tt.want.Since, tt.want.Until)
				}
				got.Since, got.Until, tt.want.Since, tt.want.Until = time.Time{}, time.Time{}, time.Time{}, time.Time{}
				if got != tt.want {
					t.Errorf("filter %+v, want %+v", got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one naming %q", tt.says)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

// Pages over HTTP: next_cursor on every page but the last, each row once.
func TestExecutionsPages(t *testing.T) {
	b := setup(t, setupOpts{})
	if resp := b.post("/v1/runs", alphaKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`); resp.status != 201 {
		t.Fatalf("create: %d %s", resp.status, resp.body)
	}
	for i := range 7 {
		if resp := b.post("/v1/runs/r1/calls", alphaKey, `{"tool":"echo","args":{"n":`+string(rune('0'+i))+`}}`); resp.status != 200 {
			t.Fatalf("call: %d %s", resp.status, resp.body)
		}
	}
	seen := map[int64]int{}
	path := "/v1/executions?run=r1&limit=3"
	pages := 0
	for {
		var list ExecutionList
		b.get(path, alphaKey).decode(t, &list)
		pages++
		for _, e := range list.Executions {
			seen[e.ID]++
		}
		if list.NextCursor == "" {
			break
		}
		if pages > 5 {
			t.Fatal("more pages than rows")
		}
		path = "/v1/executions?run=r1&limit=3&cursor=" + url.QueryEscape(list.NextCursor)
	}
	if pages != 3 || len(seen) != 7 {
		t.Errorf("%d pages, %d rows, want 3 pages of 7 rows", pages, len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("row %d seen %d times", id, n)
		}
	}
	// A page that ends exactly at the last row has no next_cursor.
	var exact ExecutionList
	b.get("/v1/executions?run=r1&limit=7", alphaKey).decode(t, &exact)
	if len(exact.Executions) != 7 || exact.NextCursor != "" {
		t.Errorf("limit 7 of 7 rows: %d rows, next_cursor %q", len(exact.Executions), exact.NextCursor)
	}
	if resp := b.get("/v1/executions?cursor=bad!", alphaKey); resp.status != 400 || !strings.Contains(string(resp.body), "cursor") {
		t.Errorf("a bad cursor: %d %s", resp.status, resp.body)
	}
}
