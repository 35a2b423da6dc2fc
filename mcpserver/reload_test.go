package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// After a reload, a tool it removed answers unknown_tool over MCP (as
// over HTTP), and a tool it added is listed to the session (which is told
// by notifications/tools/list_changed) and runs.
func TestReloadedToolsOverMCP(t *testing.T) {
	_, url := provider(t)
	gw := gateway(t, configText(t, url))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)

	next, err := config.Parse([]byte(configText(t, url, refunds.Rename("tools.set_refund_note", "set_order_note"))), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Reload(next); err != nil {
		t.Fatal(err)
	}
	meta := mcp.Meta{mcpserver.MetaRunID: "r1"}
	args := map[string]any{"order_id": orderID, "note": "n"}
	_, err = call(t, cs, "set_refund_note", args, meta)
	e := rpcError(t, err)
	if e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "unknown_tool") {
		t.Errorf("a tool the reload removed: %d %q, want invalid params with unknown_tool", e.Code, e.Message)
	}
	if _, err := call(t, cs, "set_order_note", args, meta); err != nil {
		t.Errorf("a tool the reload added: %v, want it run", err)
	}
	rows, err := gw.History(t.Context(), types.ScopedRunID("support-bot", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Tool != "set_refund_note" || rows[0].Code != types.CodeUnknownTool || rows[1].Tool != "set_order_note" {
		t.Errorf("history %+v, want the removed tool's unknown_tool row, then the added tool's", rows)
	}
}
