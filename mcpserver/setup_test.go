package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/internal/testsupport/testbin"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// binary is `toolgate`, built once for the stdio tests.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// The key of the test config's one auth.keys entry.
const (
	supportKey = "test-key-support-bot"
	orderID    = "ORD-4471"
)

// provider is the simulated payments provider on 127.0.0.1.
func provider(t *testing.T) (*sim.Payments, string) {
	t.Helper()
	p := sim.NewPayments(sim.Order{OrderID: orderID, CustomerID: "cust_42", AmountPaise: 500000})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// refundsOptions make the refunds fixture the MCP tests' config: a memory
// store, support-bot's key pinned to cust_42, get_order with an output
// schema, an idempotent set_refund_note, and issue_refund with its
// operation key (not sent as a header), owner check and verify read.
var refundsOptions = []refunds.Option{
	refunds.Add("", `auth:
  keys:
    - name: support-bot
      key: `+supportKey+`
      principal: {id: cust_42, permissions: ["refunds:write"], limits: {max_refund_paise: 500000}}
`),
	refunds.Set("tools.get_order.output_schema", "{type: object, properties: {order_id: {type: string}, customer_id: {type: string}, amount_paise: {type: integer}}}"),
	refunds.Add("tools", `set_refund_note:
  description: Set the note on an order's refunds (replaces any note).
  dependency: payments
  request: {method: PUT, path: "/orders/{order_id}/note"}
  effect: idempotent
  input_schema: {type: object, required: [order_id, note], properties: {order_id: {type: string}, note: {type: string}}}
`),
	refunds.Delete("tools.issue_refund.idempotency.header", "tools.issue_refund.rules", "tools.issue_refund.state"),
}

// configText is the MCP tests' config (refundsOptions) against the
// provider at url, changed by opts.
func configText(t *testing.T, url string, opts ...refunds.Option) string {
	t.Helper()
	return refunds.Config(url, append(slices.Clip(refundsOptions), opts...)...)
}

// writeConfig writes a config file into a fresh directory.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gateway opens an in-process gateway on a config text.
func gateway(t *testing.T, text string) *toolgate.Gateway {
	t.Helper()
	cfg, err := config.Parse([]byte(text), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

// bearer adds "Authorization: Bearer key" to every request.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// httpEndpoint serves mcpserver.Handler on 127.0.0.1.
func httpEndpoint(t *testing.T, gw *toolgate.Gateway, opts mcpserver.Options) (*mcpserver.HTTPHandler, string) {
	t.Helper()
	h := mcpserver.Handler(gw, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.CloseSessions()
		srv.Close()
	})
	return h, srv.URL
}

// connectHTTP opens a client session to an HTTP endpoint with a bearer key
// ("" sends none), at 2025-11-25: a session (stateless 2026-07-28 clients
// are tested in stateless_test.go).
func connectHTTP(t *testing.T, url, key string) *mcp.ClientSession {
	t.Helper()
	var rt http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(rt.(*http.Transport).CloseIdleConnections)
	if key != "" {
		rt = bearer{key: key, base: rt}
	}
	return connectAt(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, "2025-11-25")
}

// connectStdio starts `toolgate mcp --config path args...` and opens a
// client session to it over its stdin and stdout.
func connectStdio(t *testing.T, path string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--config", path}, args...)...)
	cmd.Stderr = &testLog{t: t}
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession { return connectAt(t, tr, "") }

// connectAt opens a client session at a protocol revision ("": the SDK's
// newest).
func connectAt(t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// testLog writes a subprocess's stderr into the test log.
type testLog struct{ t *testing.T }

func (l *testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

var _ io.Writer = (*testLog)(nil)

// call calls a tool with arguments and _meta (either may be nil).
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	t.Helper()
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
}

// mustCall is call that fails the test on a protocol error, and returns the
// envelope carried as structuredContent too.
func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) (*mcp.CallToolResult, *types.Result) {
	t.Helper()
	res, err := call(t, cs, name, args, meta)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res, envelope(t, res)
}

// envelope decodes a result's structuredContent and checks that its first
// content block is the observation (an imported tool's own blocks follow
// it) and isError is !ok.
func envelope(t *testing.T, res *mcp.CallToolResult) *types.Result {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env types.Result
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("structuredContent is not an envelope: %v\n%s", err, b)
	}
	if len(res.Content) == 0 {
		t.Fatal("no content block, want the observation first")
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	if text.Text != env.Observation || env.Observation == "" {
		t.Errorf("text content %q is not the observation %q", text.Text, env.Observation)
	}
	if res.IsError != !env.OK {
		t.Errorf("isError %t with ok %t", res.IsError, env.OK)
	}
	return &env
}

// rpcError returns err's JSON-RPC error, failing the test if it has none.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return e
}
