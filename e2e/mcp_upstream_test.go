package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/sim"
)

// TestMCPRestartedHostRefundsOnce: two `toolgate mcp` processes one after
// the other (a desktop host restarted mid-conversation) make the same
// refund through the documented config, examples/mcp/toolgate.yaml, in
// front of the payments provider's MCP server: one refund; the second
// session's call is answered replayed, nothing sent.
func TestMCPRestartedHostRefundsOnce(t *testing.T) {
	p := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
	h := p.NewMCPHandler()
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.CloseSessions(); srv.Close() })

	raw, err := os.ReadFile("../examples/mcp/toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "http://127.0.0.1:9100/mcp", srv.URL, 1)
	if text == string(raw) {
		t.Fatal("the example config no longer names http://127.0.0.1:9100/mcp")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	var envelopes []map[string]any
	for session := range 2 {
		client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cmd := exec.Command(binary, "mcp", "--config", path)
		cmd.Stderr = os.Stderr
		cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("session %d: %v", session, err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_refund",
			Arguments: map[string]any{"order_id": "ORD-4471", "amount_paise": 425000, "reason": "damaged"}})
		if err != nil {
			cs.Close()
			t.Fatalf("session %d: %v", session, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("session %d: envelope %s: %v", session, b, err)
		}
		envelopes = append(envelopes, env)
		if err := cs.Close(); err != nil {
			t.Errorf("session %d: close: %v", session, err)
		}
	}
	meta := func(i int) map[string]any { m, _ := envelopes[i]["meta"].(map[string]any); return m }
	if envelopes[0]["ok"] != true || meta(0)["replayed"] != false {
		t.Errorf("first session: %v", envelopes[0])
	}
	if envelopes[1]["ok"] != true || meta(1)["replayed"] != true {
		t.Errorf("second session: want ok and replayed, got %v", envelopes[1])
	}
	if meta(0)["run_id"] == meta(1)["run_id"] {
		t.Errorf("both sessions ran in run %v: the test does not show two sessions", meta(0)["run_id"])
	}
	if c := p.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Errorf("provider saw %d create_refund requests and made %d refunds, want 1 and 1", c.Requests, c.Refunds)
	}
}
