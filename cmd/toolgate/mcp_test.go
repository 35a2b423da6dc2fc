package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// mcpConfig writes the refunds fixture's get_order alone against a fresh
// provider, for a key whose principal is cust_42 and extraKeys (more
// auth.keys entries).
func mcpConfig(t *testing.T, extraKeys string) string {
	t.Helper()
	p := httptest.NewServer(sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000}))
	t.Cleanup(p.Close)
	return refunds.WriteFile(t, p.URL,
		refunds.Add("", `auth:
  keys:
    - name: support-bot
      key: mcp-test-key-0123456
      principal: {id: cust_42, permissions: ["refunds:write"]}
`+extraKeys),
		refunds.Delete("tools.list_refunds", "tools.issue_refund", "tools.get_order.input_schema.additionalProperties"))
}

// syncBuffer is a strings.Builder safe for a command's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMCPStdioEndsWithItsClient(t *testing.T) {
	path := mcpConfig(t, "")
	var stdout, stderr syncBuffer
	code := run(context.Background(), &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.Getenv},
		[]string{"mcp", "--config", path})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("stdout carries protocol messages only, got %q", stdout.String())
	}
}

func TestMCPStdioNeedsAKeyAmongSeveral(t *testing.T) {
	path := mcpConfig(t, "    - name: billing\n      key: other-key-0123456789\n")
	var stdout, stderr syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.Getenv}
	if code := run(context.Background(), e, []string{"mcp", "--config", path}); code != 1 || !strings.Contains(stderr.String(), "--key") && !strings.Contains(stderr.String(), "choose") {
		t.Errorf("exit %d, stderr %q: want 1 and a message asking to choose a key", code, stderr.String())
	}
	stderr = syncBuffer{}
	if code := run(context.Background(), e, []string{"mcp", "--config", path, "--key", "billing"}); code != 0 {
		t.Errorf("with --key billing: exit %d: %s", code, stderr.String())
	}
}

// bearerTransport sends a bearer key on every request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeMountsMCP runs `toolgate serve` in process, talks MCP to /mcp,
// and checks that a connected session's standing stream does not hold up a
// graceful shutdown.
func TestServeMountsMCP(t *testing.T) {
	path := mcpConfig(t, "")
	found := make(chan string, 1)
	stderr := &prefixWatcher{prefix: "toolgate listening on ", found: found}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, &env{stdout: stderr, stderr: stderr, getenv: os.Getenv}, []string{"serve", "--config", path, "--listen", "127.0.0.1:0"})
	}()
	var base string
	select {
	case base = <-found:
	case code := <-exit:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: strings.TrimSpace(base) + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{"mcp-test-key-0123456"}}}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_order", Arguments: map[string]any{"order_id": "ORD-4471"}})
	if err != nil || res.IsError {
		t.Fatalf("get_order over /mcp: %v %+v", err, res)
	}
	cancel() // SIGTERM: the session is still open
	if code := <-exit; code != 0 {
		t.Errorf("serve exited %d after shutdown with an MCP session open: %s", code, stderr.String())
	}
}

// prefixWatcher keeps a command's output and sends the rest of the first
// line that starts with prefix.
type prefixWatcher struct {
	syncBuffer
	prefix string
	found  chan string
}

func (w *prefixWatcher) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found != nil {
		for _, line := range strings.Split(w.b.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, w.prefix); ok && strings.Contains(w.b.String(), line+"\n") {
				w.found <- rest
				w.found = nil
				break
			}
		}
	}
	return n, err
}
