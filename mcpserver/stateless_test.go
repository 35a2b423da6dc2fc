package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// tsOutput is what testdata/tsclient.mjs prints.
type tsOutput struct {
	Version string   `json:"version"`
	Tools   []string `json:"tools"`
	Calls   []struct {
		IsError  bool          `json:"isError"`
		Text     string        `json:"text"`
		Envelope *types.Result `json:"envelope"`
		Error    string        `json:"error"`
	} `json:"calls"`
}

// tsClient runs the TypeScript SDK v2 client (pinned in
// scripts/install-mcp-servers.sh) on Node 22 with the arguments and calls.
func tsClient(t *testing.T, calls []map[string]any, args ...string) tsOutput {
	t.Helper()
	node := npmfixture.Node(t)
	pkg := filepath.Dir(npmfixture.Path(t, "@modelcontextprotocol/client", "package.json"))
	callsJSON, _ := json.Marshal(calls)
	cmd := exec.Command(node, append([]string{"testdata/tsclient.mjs"}, args...)...)
	cmd.Env = append(os.Environ(), "TG_MCP_CLIENT="+pkg, "TG_CALLS="+string(callsJSON))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tsclient.mjs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var res tsOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("tsclient.mjs printed %q: %v", out, err)
	}
	return res
}

var refundTwice = []map[string]any{
	{"name": "issue_refund", "arguments": map[string]any{"order_id": orderID, "amount_paise": 1000}},
	{"name": "issue_refund", "arguments": map[string]any{"order_id": orderID, "amount_paise": 1000}},
}

// The TypeScript SDK v2 client pinned to 2026-07-28 talks to /mcp without
// a session: it lists and calls tools, its calls go to the key's stateless
// run, and a repeated refund in that conversation is replayed, not sent
// to the provider twice.
func TestTypeScriptClientStatelessHTTP(t *testing.T) {
	t.Parallel()
	p, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url)), mcpserver.Options{})
	out := tsClient(t, refundTwice, "http", endpoint, supportKey)
	if out.Version != mcpserver.StatelessRevision {
		t.Errorf("negotiated %q, want %s", out.Version, mcpserver.StatelessRevision)
	}
	if !slices.Contains(out.Tools, "issue_refund") || !slices.Contains(out.Tools, "get_order") {
		t.Errorf("tools/list gave %v", out.Tools)
	}
	if len(out.Calls) != 2 {
		t.Fatalf("calls: %+v", out.Calls)
	}
	for i, c := range out.Calls {
		if c.Error != "" || c.Envelope == nil || !c.Envelope.OK {
			t.Fatalf("call %d: %+v", i+1, c)
		}
		if c.Envelope.Meta.RunID != mcpserver.StatelessRunID {
			t.Errorf("call %d went to run %q, want the key's %s", i+1, c.Envelope.Meta.RunID, mcpserver.StatelessRunID)
		}
	}
	if first, second := out.Calls[0].Envelope.Meta, out.Calls[1].Envelope.Meta; first.Replayed || !second.Replayed {
		t.Errorf("replayed: first %t, second %t; want the repeat replayed", first.Replayed, second.Replayed)
	}
	if c := p.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Errorf("the provider saw %d refund requests and made %d refunds, want 1 and 1", c.Requests, c.Refunds)
	}
}

// Over stdio the same client negotiates 2026-07-28 with `toolgate mcp`.
func TestTypeScriptClientStdio(t *testing.T) {
	t.Parallel()
	p, url := provider(t)
	path := writeConfig(t, configText(t, url))
	out := tsClient(t, refundTwice, "stdio", binary, "mcp", "--config", path)
	if out.Version != mcpserver.StatelessRevision {
		t.Errorf("negotiated %q, want %s", out.Version, mcpserver.StatelessRevision)
	}
	if !slices.Contains(out.Tools, "issue_refund") {
		t.Errorf("tools/list gave %v", out.Tools)
	}
	if len(out.Calls) != 2 || out.Calls[0].Envelope == nil || out.Calls[1].Envelope == nil || !out.Calls[1].Envelope.Meta.Replayed {
		t.Fatalf("calls: %+v", out.Calls)
	}
	if c := p.Counts(); c.Requests != 1 {
		t.Errorf("the provider saw %d refund requests, want 1", c.Requests)
	}
}

// A 2025-06-18 client opens a session on the same URL, and its calls go to
// the session's run.
func TestSessionClient20250618(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url)), mcpserver.Options{})
	cs := connectHTTPAt(t, endpoint, supportKey, "2025-06-18")
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" || cs.ID() == "" {
		t.Fatalf("negotiated %q with session id %q, want 2025-06-18 with a session", v, cs.ID())
	}
	if names := listNames(t, cs); !slices.Contains(names, "get_order") {
		t.Errorf("tools/list gave %v", names)
	}
	_, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil)
	if !env.OK || !strings.HasPrefix(env.Meta.RunID, "mcp_") || env.Meta.RunID == mcpserver.StatelessRunID {
		t.Errorf("a session's call: ok %t, run %q; want the session's own run", env.OK, env.Meta.RunID)
	}
}

// connectHTTPAt opens a client session at a protocol revision.
func connectHTTPAt(t *testing.T, url, key, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := tryConnectHTTPAt(t, url, key, version)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// tryConnectHTTPAt is connectHTTPAt that returns the error.
func tryConnectHTTPAt(t *testing.T, url, key, version string) (*mcp.ClientSession, error) {
	rt := bearer{key: key, base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(rt.base.(*http.Transport).CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// post sends one JSON-RPC message to /mcp and returns the status, the
// headers and the body (an SSE body's data line). With a version, it sends
// the headers 2026-07-28 requires (Mcp-Method, and Mcp-Name for a
// tools/call of get_order).
func post(t *testing.T, endpoint, key, version, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(body), &m)
		req.Header.Set("Mcp-Method", m.Method)
		if m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	for line := range strings.SplitSeq(text, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
			text = data
		}
	}
	return resp.StatusCode, resp.Header, text
}

const statelessMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// Requests on the wire: server/discover lists 2026-07-28 beside the
// session revisions; a stateless call gets no session; a run id in _meta
// may be scoped to the caller's key (as on the HTTP API) but not to
// another's.
func TestStatelessRequests(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url, twoKeys...)), mcpserver.Options{})

	status, _, body := post(t, endpoint, supportKey, "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{`+statelessMeta+`}}}`)
	var discover struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(body), &discover)
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		if !slices.Contains(discover.Result.SupportedVersions, v) {
			t.Errorf("server/discover (%d) does not list %s: %s", status, v, body)
		}
	}

	callWith := func(key, run string) (int, http.Header, string) {
		return post(t, endpoint, key, "2026-07-28", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_order",`+
			`"arguments":{"order_id":"ORD-4471"},"_meta":{`+statelessMeta+`,"toolgate/run_id":"`+run+`"}}}`)
	}
	tests := []struct {
		key, run string
		status   int    // 2026-07-28 answers a JSON-RPC error with 400
		want     string // in the answer
	}{
		{supportKey, "r1", http.StatusOK, `"run_id":"r1"`},
		{supportKey, "support-bot/r1", http.StatusOK, `"run_id":"r1"`},
		{supportKey, "billing/r1", http.StatusBadRequest, "cannot be used with this key"},
		{"test-key-billing", "support-bot/r1", http.StatusBadRequest, "cannot be used with this key"},
		{supportKey, "support-bot/../r1", http.StatusBadRequest, "a run id is"},
	}
	for _, tt := range tests {
		status, header, body := callWith(tt.key, tt.run)
		if status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("run %q with key %s: %d %s; want %d with %s", tt.run, tt.key, status, body, tt.status, tt.want)
		}
		if id := header.Get("Mcp-Session-Id"); id != "" {
			t.Errorf("a stateless call was given session %q", id)
		}
	}
}

// A key holds at most MaxSessionsPerKey sessions: one more initialize is
// answered 429 with what to do; another key, and stateless calls, are not
// affected; ending a session frees its place.
func TestSessionCapPerKey(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	_, endpoint := httpEndpoint(t, gateway(t, configText(t, url, twoKeys...)), mcpserver.Options{MaxSessionsPerKey: 2})
	first := connectHTTPAt(t, endpoint, supportKey, "2025-11-25")
	connectHTTPAt(t, endpoint, supportKey, "2025-11-25")

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	status, header, body := post(t, endpoint, supportKey, "", initialize)
	if status != http.StatusTooManyRequests || !strings.Contains(body, `already holds 2 MCP sessions`) || header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a third session: %d %s; want 429 saying the key holds 2", status, body)
	}
	connectHTTPAt(t, endpoint, "test-key-billing", "2025-11-25")
	if out := tsOrStateless(t, endpoint); !strings.Contains(out, `"ok":true`) {
		t.Errorf("a stateless call of the capped key: %s", out)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The place first held is free once its DELETE is answered, or at the
	// latest once the server notices the session has ended: poll for it
	// rather than race the server's bookkeeping on a loaded machine.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for tries := 0; ; tries++ {
		cs, err := tryConnectHTTPAt(t, endpoint, supportKey, "2025-11-25")
		if err == nil {
			cs.Close()
			return
		}
		if tries == 500 {
			t.Fatalf("after the first session ended, another: %v; want a session in its place", err)
		}
		<-tick.C
	}
}

// tsOrStateless makes one stateless get_order call with the support key.
func tsOrStateless(t *testing.T, endpoint string) string {
	t.Helper()
	_, _, body := post(t, endpoint, supportKey, "2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_order",`+
		`"arguments":{"order_id":"ORD-4471"},"_meta":{`+statelessMeta+`}}}`)
	return body
}
