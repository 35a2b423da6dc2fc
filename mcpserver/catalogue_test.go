package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// catalogueKeys gives support-bot a list and adds two keys: reader (a
// list, no principal) and cust-7 (a pinned principal without
// refunds:write, no list).
var catalogueKeys = []refunds.Option{refunds.Set("auth.keys", `
- name: support-bot
  key: `+supportKey+`
  tools: ["get_order", "issue_refund"]
  principal: {id: cust_42, permissions: ["refunds:write"], limits: {max_refund_paise: 500000}}
- name: reader
  key: test-key-reader-0001
  tools: ["get_*", "list_*"]
- name: cust-7
  key: test-key-cust-7-0001
  principal: {id: cust_7}
`)}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestToolsListIsTheKeysCatalogue: over HTTP each key's session lists its
// own tools; a hidden tool answers unknown_tool naming only the key's
// tools; a tool hidden by the pinned principal's permissions is still
// callable and answers forbidden.
func TestToolsListIsTheKeysCatalogue(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	gw := gateway(t, configText(t, url, catalogueKeys...))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	tests := []struct {
		key    string
		listed []string
	}{
		{supportKey, []string{"get_order", "issue_refund"}},
		{"test-key-reader-0001", []string{"get_order", "list_refunds"}},
		{"test-key-cust-7-0001", []string{"get_order", "list_refunds", "set_refund_note"}},
	}
	sessions := map[string]*mcp.ClientSession{}
	for _, tt := range tests {
		cs := connectHTTP(t, endpoint, tt.key)
		sessions[tt.key] = cs
		if got := toolNames(t, cs); !slices.Equal(got, tt.listed) {
			t.Errorf("key %s lists %v, want %v", tt.key, got, tt.listed)
		}
	}

	_, err := call(t, sessions["test-key-reader-0001"], "issue_refund", map[string]any{"order_id": orderID, "amount_paise": 100}, nil)
	e := rpcError(t, err)
	if e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "Available tools: get_order, list_refunds.") ||
		strings.Contains(e.Message, "set_refund_note") {
		t.Errorf("reader calling issue_refund: %d %q, want unknown_tool naming only its tools", e.Code, e.Message)
	}

	_, env := mustCall(t, sessions["test-key-cust-7-0001"], "issue_refund", map[string]any{"order_id": orderID, "amount_paise": 100}, nil)
	if env.Code() != types.CodeForbidden {
		t.Errorf("cust-7 calling issue_refund: %s %q, want forbidden", env.Code(), env.Observation)
	}
}

// TestStdioListsTheLocalKeysCatalogue: `toolgate mcp --key` lists that
// key's tools.
func TestStdioListsTheLocalKeysCatalogue(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	cs := connectStdio(t, writeConfig(t, configText(t, url, catalogueKeys...)), "--key", "reader")
	if got, want := toolNames(t, cs), []string{"get_order", "list_refunds"}; !slices.Equal(got, want) {
		t.Errorf("stdio for reader lists %v, want %v", got, want)
	}
}
