package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/mcpserver"
)

// countingUpstream is a Go SDK server whose "count" tool reports progress
// three times, then answers.
func countingUpstream(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "count", Description: "counts", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 3 {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	return up.URL
}

// TestProgressAheadOfTheAnswer: the upstream's progress reaches the host
// on the stream of the host's own tools/call, ahead of its answer, as the
// upstream sent it. A host reads that stream in order and stops listening
// for the call's progress at its answer: progress sent on the session's
// other stream could arrive after the answer and be dropped (the MCP
// conformance suite's tools-call-with-progress then failed, now and then,
// through toolgate).
func TestProgressAheadOfTheAnswer(t *testing.T) {
	gw := gateway(t, "store: memory\ndependencies:\n  up:\n    mcp: {url: "+strconv.Quote(countingUpstream(t))+"}\n    import: {tools: [count]}\n")
	_, url := httpEndpoint(t, gw, mcpserver.Options{})

	session, _ := rpc(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if session == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	rpc(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, messages := rpc(t, url, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{},"_meta":{"progressToken":"p1"}}}`)

	var order []string
	for _, m := range messages {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken any     `json:"progressToken"`
				Progress      float64 `json:"progress"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(m), &msg); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		switch {
		case msg.Method == "notifications/progress" && msg.Params.ProgressToken == "p1":
			order = append(order, "progress "+strconv.FormatFloat(msg.Params.Progress, 'f', -1, 64))
		case string(msg.ID) == "2":
			order = append(order, "answer")
		}
	}
	if got := strings.Join(order, ", "); got != "progress 0, progress 1, progress 2, answer" {
		t.Fatalf("the tools/call stream carried %q, want the three progress notifications, then the answer", got)
	}
}

// rpc posts one JSON-RPC message to url in session (none: "") and returns
// the session id it was given and the messages of the answer, in order (an
// SSE stream's data lines, or a JSON body).
func rpc(t *testing.T, url, session, body string) (string, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: status %d", body, resp.StatusCode)
	}
	var messages []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			messages = append(messages, data)
		} else if strings.HasPrefix(line, "{") {
			messages = append(messages, line)
		}
	}
	return resp.Header.Get("Mcp-Session-Id"), messages
}
