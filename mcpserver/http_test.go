package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// twoKeys adds two keys to the refunds config: billing (no principal)
// and support-2 (the same principal as support-bot).
var twoKeys = []refunds.Option{refunds.Append("auth.keys", `
- name: billing
  key: test-key-billing
- name: support-2
  key: test-key-support-2
  principal: {id: cust_42, permissions: ["refunds:write"]}
`)}

func TestHTTPNeedsAKey(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url)), mcpserver.Options{})
	for _, key := range []string{"", "not-a-key"} {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("key %q: status %d, want 401", key, resp.StatusCode)
		}
	}
}

func TestHTTPSessionsAreRunsOfTheirKey(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	gw := gateway(t, configText(t, url, twoKeys...))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	args := map[string]any{"order_id": orderID}

	a := connectHTTP(t, endpoint, supportKey)
	_, a1 := mustCall(t, a, "get_order", args, nil)
	_, a2 := mustCall(t, a, "get_order", args, nil)
	b := connectHTTP(t, endpoint, "test-key-billing")
	_, b1 := mustCall(t, b, "get_order", args, nil)

	if a1.Meta.RunID != a2.Meta.RunID || a2.Meta.Step != 2 {
		t.Errorf("one session's calls went to runs %s and %s (step %d), want one run", a1.Meta.RunID, a2.Meta.RunID, a2.Meta.Step)
	}
	if b1.Meta.RunID == a1.Meta.RunID || b1.Meta.Step != 1 {
		t.Errorf("a second session shares run %s, want its own", b1.Meta.RunID)
	}
	ra, err := gw.GetRun(t.Context(), types.ScopedRunID("support-bot", a1.Meta.RunID))
	if err != nil {
		t.Fatal(err)
	}
	if ra.Owner != "support-bot" || ra.Principal.ID != "cust_42" || !ra.Principal.Can("refunds:write") {
		t.Errorf("run of support-bot: owner %q principal %+v, want the key entry's principal", ra.Owner, ra.Principal)
	}
	rb, err := gw.GetRun(t.Context(), types.ScopedRunID("billing", b1.Meta.RunID))
	if err != nil {
		t.Fatal(err)
	}
	if rb.Owner != "billing" || rb.Principal.ID != "billing" || len(rb.Principal.Permissions) != 0 {
		t.Errorf("run of billing (a key without a principal): owner %q principal %+v, want {id: billing}", rb.Owner, rb.Principal)
	}

	// A run named in _meta belongs to the key that made it: another key
	// naming the same id gets a run of its own, as on the HTTP API, even a
	// key with the same principal.
	named := mcp.Meta{mcpserver.MetaRunID: "shared"}
	for _, cs := range []*mcp.ClientSession{a, a} {
		mustCall(t, cs, "get_order", args, named)
	}
	for _, cs := range []*mcp.ClientSession{b, connectHTTP(t, endpoint, "test-key-support-2")} {
		if _, env := mustCall(t, cs, "get_order", args, named); env.Meta.RunID != "shared" || env.Meta.Step != 1 {
			t.Errorf("another key naming run shared: run %s step %d, want its own run shared at step 1", env.Meta.RunID, env.Meta.Step)
		}
	}
	if _, env := mustCall(t, a, "get_order", args, named); env.Meta.Step != 3 {
		t.Errorf("support-bot's run shared is at step %d, want 3", env.Meta.Step)
	}
}

func TestHTTPSessionBelongsToItsKey(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url, twoKeys...)), mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_order","arguments":{"order_id":"ORD-4471"}}}`
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	req.Header.Set("Authorization", "Bearer test-key-billing")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another key on support-bot's session: status %d, want 403", resp.StatusCode)
	}
}

func TestHTTPDevModePrincipal(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	text := configText(t, url, refunds.Delete("auth"))
	gw := gateway(t, text)
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, "")
	res, env := mustCall(t, cs, "issue_refund", map[string]any{"order_id": orderID, "amount_paise": 100}, nil)
	if !res.IsError || env.Error.Code != types.CodeForbidden {
		t.Errorf("the dev principal has no permissions: want forbidden, got %s", env.Observation)
	}
	run, err := gw.GetRun(t.Context(), env.Meta.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Principal.ID != mcpserver.DevPrincipalID || run.Owner != "" {
		t.Errorf("dev-mode run: principal %+v owner %q, want {id: mcp} and no owner", run.Principal, run.Owner)
	}
}

func TestHTTPMalformedJSONRPC(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url)), mcpserver.Options{})
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+supportKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("status %d: %s", resp.StatusCode, b)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400: %s", resp.StatusCode, b)
	}
	var msg struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err == nil && msg.Error != nil && msg.Error.Code != jsonrpc.CodeParseError {
		t.Errorf("error %+v, want a parse error", msg.Error)
	}
}

func TestUnknownToolIsRecorded(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	gw := gateway(t, configText(t, url))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	if _, err := call(t, cs, "refund_everything", nil, mcp.Meta{mcpserver.MetaRunID: "r1"}); err == nil {
		t.Fatal("an unknown tool was answered with a result")
	}
	rows, err := gw.History(t.Context(), types.ScopedRunID("support-bot", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Code != types.CodeUnknownTool || rows[0].Tool != "refund_everything" {
		t.Errorf("history %+v, want one unknown_tool row", rows)
	}
}

func TestCloseEndsStandingStreams(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	h, endpoint := httpEndpoint(t, gateway(t, configText(t, url)), mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	h.Close()
	req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Authorization", "Bearer "+supportKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a new stream after Close: status %d, want 503", resp.StatusCode)
	}
	// Calls still work until the server stops.
	if _, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil); !env.OK {
		t.Errorf("a call after Close failed: %s", env.Observation)
	}
}
