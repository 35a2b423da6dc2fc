package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
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
