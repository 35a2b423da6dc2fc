package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
)

// The keys of the catalogue test's server.
const (
	refundsKey         = "refunds-bot-key-0123456789"
	readerKey          = "reader-bot-key-01234567890"
	cataloguePinnedKey = "pinned-bot-key-01234567890"
	catalogueOpsKey    = "ops-person-key-01234567890"
)

// catalogueYAML gives each key its own catalogue (docs/catalogues.md):
// refunds-bot three tools by name, reader two by glob, pinned-bot every tool
// but a pinned principal without refunds:write, ops every tool.
var catalogueYAML = catalogueConfig(`["get_*", "list_*"]`)

// catalogueConfig is catalogueYAML with readerTools as the reader key's
// tools: list.
func catalogueConfig(readerTools string) string {
	return refunds.Config("PROVIDER",
		server("sqlite:toolgate.db",
			`{name: refunds-bot, key: `+refundsKey+`, tools: ["get_order", "list_refunds", "issue_refund"], `+
				`principal: {id: cust_42, permissions: ["refunds:write"], limits: {max_refund_paise: 500000}}}`,
			"{name: reader, key: "+readerKey+", tools: "+readerTools+"}",
			"{name: pinned-bot, key: "+cataloguePinnedKey+", principal: {id: cust_42}}",
			"{name: ops, key: "+catalogueOpsKey+"}"),
		refunds.Set("tools.issue_refund.input_schema", plainRefundArgs),
		refunds.Delete("tools.issue_refund.idempotency", "tools.issue_refund.rules", "tools.issue_refund.owner", "tools.issue_refund.verify", "tools.issue_refund.state"),
		refunds.Add("tools", `close_account:
  description: Close a customer's account.
  dependency: payments
  request: {method: POST, path: /close}
  effect: write
  permission: accounts:admin
`))
}

// listedTools returns the tool names of a GET /v1/tools answer in format.
func listedTools(t *testing.T, srv *proc, key, format string) []string {
	t.Helper()
	a := srv.get("/v1/tools?format="+format, key)
	if a.status != http.StatusOK {
		t.Fatalf("GET /v1/tools?format=%s: %d %s", format, a.status, a.body)
	}
	var items []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if format == "" {
		var own struct {
			Tools json.RawMessage `json:"tools"`
		}
		a.decode(t, &own)
		a.body = own.Tools
	}
	a.decode(t, &items)
	names := []string{}
	for _, it := range items {
		names = append(names, it.Name+it.Function.Name)
	}
	return names
}

// mcpTools lists the tools of an MCP session on the server's /mcp.
func mcpTools(t *testing.T, srv *proc, key string) ([]string, *mcp.ClientSession) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{key: key, base: tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names, cs
}

type bearerTransport struct {
	key  string
	base http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// Each key sees its own tool catalogue, in every list, and cannot call
// what it does not see.
func TestCataloguesPerKey(t *testing.T) {
	prov := startProvider(t)
	srv := startServe(t, strings.ReplaceAll(catalogueYAML, "PROVIDER", prov.URL()))
	all := []string{"close_account", "get_order", "issue_refund", "list_refunds"}
	tests := []struct {
		name, key string
		want      []string
	}{
		{"by name", refundsKey, []string{"get_order", "issue_refund", "list_refunds"}},
		{"by glob", readerKey, []string{"get_order", "list_refunds"}},
		{"a pinned principal without refunds:write", cataloguePinnedKey, []string{"get_order", "list_refunds"}},
		{"no list", catalogueOpsKey, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, format := range []string{"", "openai", "anthropic", "mcp"} {
				if got := listedTools(t, srv, tt.key, format); !slices.Equal(got, tt.want) {
					t.Errorf("GET /v1/tools?format=%s: %v, want %v", format, got, tt.want)
				}
			}
			if got, _ := mcpTools(t, srv, tt.key); !slices.Equal(got, tt.want) {
				t.Errorf("MCP tools/list: %v, want %v", got, tt.want)
			}
		})
	}

	// A hidden tool is unknown_tool, and the observation names only the
	// key's own tools.
	if a := srv.post("/v1/runs", readerKey, `{"run_id":"reader-run","principal":{"id":"cust_42","permissions":["refunds:write"]}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	hidden := srv.call("reader-run", readerKey, "issue_refund", `{"order_id":"ORD-4471","amount_paise":100}`)
	if hidden.Code() != types.CodeUnknownTool || hidden.Meta.SideEffect != types.SideEffectNone ||
		!strings.Contains(hidden.Observation, "Available tools: get_order, list_refunds.") {
		t.Errorf("reader calling issue_refund: %s %q", hidden.Code(), hidden.Observation)
	}
	for _, secret := range []string{"close_account", "Did you mean"} {
		if strings.Contains(hidden.Observation, secret) || strings.Contains(hidden.Error.Message, secret) {
			t.Errorf("the unknown_tool answer reveals %q: %q", secret, hidden.Observation)
		}
	}
	if len(prov.Refunds()) != 0 {
		t.Errorf("a hidden tool's call reached the provider: %v", prov.Refunds())
	}
	_, cs := mcpTools(t, srv, readerKey)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "close_account", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "Available tools: get_order, list_refunds.") {
		t.Errorf("reader calling close_account over MCP: %v", err)
	}

	// A listed tool whose permission the run's principal lacks stays
	// forbidden.
	if a := srv.post("/v1/runs", catalogueOpsKey, `{"run_id":"ops-run","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	if res := srv.call("ops-run", catalogueOpsKey, "issue_refund", `{"order_id":"ORD-4471","amount_paise":100}`); res.Code() != types.CodeForbidden {
		t.Errorf("ops run without refunds:write calling issue_refund: %s %q", res.Code(), res.Observation)
	}
}

// `toolgate check` names a tools: entry that matches no tool, and its key.
func TestCheckNamesAnUnmatchedCatalogueEntry(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	bad := strings.ReplaceAll(catalogueConfig(`["get_*", "crm_*"]`), "PROVIDER", "http://127.0.0.1:1")
	if err := writeFile(path, bad); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "check", "--config", path)
	if code != 1 || !strings.Contains(out, `auth.keys[1].tools[1]: "crm_*" (key reader) matches no tool`) {
		t.Errorf("check: exit %d\n%s", code, out)
	}
}
