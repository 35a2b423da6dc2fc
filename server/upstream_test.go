package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
)

// TestImportedToolsOverHTTP: the tools of an MCP server are listed by
// /v1/tools with their source, and called through /v1/runs/{run}/calls
// like toolgate's own: a repeated write is replayed, the server paid once.
func TestImportedToolsOverHTTP(t *testing.T) {
	fx := mcptest.New()
	up := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { fx.CloseSessions(); up.Close() })
	b := setup(t, setupOpts{config: func(c *config.Config) {
		c.Dependencies = map[string]*config.Dependency{"fx": {
			MCP: &config.MCP{URL: up.URL}, Import: &config.Import{Tools: []string{"echo", "pay"}, Prefix: "fx_"}}}
		c.Tools["fx_pay"] = &config.Tool{Idempotency: config.Idempotency{Key: "pay:{order_id}:{amount}:{principal.id}"}}
	}})

	var list struct {
		Tools []struct {
			Name   string        `json:"name"`
			Effect string        `json:"effect"`
			Source config.Source `json:"source"`
		} `json:"tools"`
	}
	b.get("/v1/tools", alphaKey).decode(t, &list)
	got := map[string]string{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool.Effect + " " + tool.Source.Kind + ":" + tool.Source.Dependency + "/" + tool.Source.Name
	}
	for name, want := range map[string]string{"fx_echo": "read mcp:fx/echo", "fx_pay": "write mcp:fx/pay", "echo": "read go:/"} {
		if got[name] != want {
			t.Errorf("/v1/tools: %s is %q, want %q", name, got[name], want)
		}
	}

	run := b.startRun(alphaKey, `{"principal": {"id": "cust_42"}}`)
	first := b.post("/v1/runs/"+run+"/calls", alphaKey, `{"tool": "fx_pay", "args": {"order_id": "ORD-1", "amount": 425000}}`)
	again := b.post("/v1/runs/"+run+"/calls", alphaKey, `{"tool": "fx_pay", "args": {"order_id": "ORD-1", "amount": 425000}}`)
	if first.status != http.StatusOK || !first.envelope(t).OK {
		t.Fatalf("fx_pay: %d %s", first.status, first.body)
	}
	if res := again.envelope(t); !res.OK || !res.Meta.Replayed {
		t.Errorf("repeat: %s", again.body)
	}
	if c := fx.Counts(); c.Pay != 1 || len(c.Keys) != 1 || c.Keys[0] != "alpha/pay:ORD-1:425000:cust_42" { // scoped to the run's key
		t.Errorf("the server saw %d payments, keys %q", c.Pay, c.Keys)
	}
}
