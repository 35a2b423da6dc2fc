package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// TestToolsListIsTheKeysCatalogue: GET /v1/tools in every format lists the
// caller's key's tools only, and a call of another tool is unknown_tool
// naming only the key's tools.
func TestToolsListIsTheKeysCatalogue(t *testing.T) {
	b := setup(t, setupOpts{config: func(c *config.Config) {
		c.Auth.Keys[0].Tools = []string{"echo"} // alpha
		c.Auth.Keys[1].Tools = []string{"h*"}   // beta
	}})
	for _, format := range []string{"", "openai", "anthropic", "mcp"} {
		for key, want := range map[string]string{alphaKey: "echo", betaKey: "hold"} {
			resp := b.get("/v1/tools?format="+format, key)
			if resp.status != http.StatusOK {
				t.Fatalf("%s: %d %s", format, resp.status, resp.body)
			}
			var names []string
			for _, n := range []string{"echo", "hold"} {
				if strings.Contains(string(resp.body), fmt.Sprintf("%q", n)) {
					names = append(names, n)
				}
			}
			if !slices.Equal(names, []string{want}) {
				t.Errorf("format %q: the key of %s is shown %v: %s", format, want, names, resp.body)
			}
		}
	}
	run := b.startRun(alphaKey, `{"principal":{"id":"cust_1"}}`)
	res := b.post("/v1/runs/"+run+"/calls", alphaKey, `{"tool":"hold","args":{}}`).envelope(t)
	if res.Code() != "unknown_tool" || !strings.Contains(res.Observation, "Available tools: echo.") || strings.Contains(res.Observation, "hold.") {
		t.Errorf("alpha calling beta's hold: %s %q", res.Code(), res.Observation)
	}
}

// TestToolsScopeAllIsForOperators: scope=all lists every tool to an
// approver key (the dashboard's view) and is refused to an agent's key.
func TestToolsScopeAllIsForOperators(t *testing.T) {
	const opsKey = "ops-person-key-012345"
	b := setup(t, setupOpts{config: func(c *config.Config) {
		c.Auth.Keys[0].Tools = []string{"echo"}
		c.Auth.Keys = append(c.Auth.Keys, config.Key{Name: "ops", Key: opsKey, Approver: true, Tools: []string{"echo"}})
	}})
	tests := []struct {
		key, query string
		status     int
		hold       bool // the answer lists hold
	}{
		{opsKey, "?scope=all", http.StatusOK, true},
		{opsKey, "", http.StatusOK, false},
		{alphaKey, "?scope=all", http.StatusForbidden, false},
		{alphaKey, "?scope=some", http.StatusBadRequest, false},
	}
	for _, tt := range tests {
		resp := b.get("/v1/tools"+tt.query, tt.key)
		if resp.status != tt.status || strings.Contains(string(resp.body), `"hold"`) != tt.hold {
			t.Errorf("%s%s: %d %s", tt.key[:4], tt.query, resp.status, resp.body)
		}
	}
}

// TestApprovalsOfHiddenToolsAreNotShown: an agent key does not see an
// approval of its own run for a tool outside its list (one its list held
// before a reload), neither listed nor by id.
func TestApprovalsOfHiddenToolsAreNotShown(t *testing.T) {
	b := setup(t, setupOpts{config: func(c *config.Config) { c.Auth.Keys[0].Tools = []string{"echo"} }})
	run := b.startRun(alphaKey, `{"principal":{"id":"cust_1"}}`)
	as := b.gw.Store()
	now := b.gw.Now()
	for _, a := range []store.Approval{
		{ID: "apr_visible", Tool: "echo", RunID: types.ScopedRunID("alpha", run)},
		{ID: "apr_hidden", Tool: "hold", RunID: types.ScopedRunID("alpha", run)},
	} {
		a.ArgsHash, a.PrincipalID, a.Status, a.CreatedAt, a.ExpiresAt = "h-"+a.ID, "cust_1", store.ApprovalPending, now, now.Add(time.Hour)
		if err := as.CreateApproval(t.Context(), &a); err != nil {
			t.Fatal(err)
		}
	}
	list := b.get("/v1/approvals?status=pending", alphaKey)
	if !strings.Contains(string(list.body), "apr_visible") || strings.Contains(string(list.body), "apr_hidden") {
		t.Errorf("alpha's approvals: %s", list.body)
	}
	if resp := b.get("/v1/approvals/apr_hidden", alphaKey); resp.status != http.StatusNotFound {
		t.Errorf("alpha reading the hidden tool's approval: %d %s", resp.status, resp.body)
	}
}
