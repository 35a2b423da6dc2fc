//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of MCP 2026-07-28 (SEP-2577), but toolgate relays them for the revisions that have them (docs/mcp-upstreams.md, "What reaches the MCP client").

package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/mcpserver"
)

// askingUpstream is a Go SDK server whose "ask" tool, during the call,
// logs, asks the client a question (elicitation) and a model (sampling),
// reports progress just before its result, and answers with what it was
// told and an image.
func askingUpstream(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ServerOptions{HasTools: true})
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "asks", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "asking"})
			el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			answer := "elicitation failed: " + fmt.Sprint(err)
			if err == nil {
				answer = el.Action + " " + fmt.Sprint(el.Content["name"])
			}
			sm, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err == nil {
				answer += "; model said " + sm.Content.(*mcp.TextContent).Text
			} else {
				answer += "; sampling failed"
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 1, Message: "done"})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNG"), Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	return up.URL
}

// host is an MCP host connected to toolgate that answers elicitation with
// its name (or declines, without one) and sampling with "hello from NAME";
// it keeps the progress and log notifications it got. A notification may
// be handled after the call's answer: progressed says when one was.
type host struct {
	mu         sync.Mutex
	progress   []string
	logs       []string
	progressed chan struct{}
}

func connectHost(t *testing.T, url, name string, capable bool) (*mcp.ClientSession, *host) {
	t.Helper()
	h := &host{progressed: make(chan struct{}, 16)}
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			h.mu.Lock()
			h.progress = append(h.progress, fmt.Sprint(r.Params.ProgressToken, " ", r.Params.Message))
			h.mu.Unlock()
			select {
			case h.progressed <- struct{}{}:
			default:
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.mu.Lock()
			h.logs = append(h.logs, fmt.Sprint(r.Params.Data))
			h.mu.Unlock()
		},
	}
	if capable {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if name == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		}
		opts.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello from " + name}}, nil
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host-" + name, Version: "1"}, opts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url},
		// A session: relays need one (a stateless 2026-07-28 call has no
		// channel for the server's requests).
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return cs, h
}

// TestRelayToCaller: an upstream's logging, elicitation, sampling and
// progress during a call reach the host that made the call, and no other,
// with two calls in flight on the same upstream at once; the answer's image
// reaches the host after the observation; the observation records that a
// person was asked and the action. A host without the capabilities gets
// none of it relayed, and the upstream gets an error.
func TestRelayToCaller(t *testing.T) {
	gw := gateway(t, "store: memory\ndependencies:\n  up:\n    mcp: {url: "+strconv.Quote(askingUpstream(t))+"}\n    import: {tools: [ask]}\n")
	_, url := httpEndpoint(t, gw, mcpserver.Options{})

	type outcome struct {
		res *mcp.CallToolResult
		err error
		h   *host
	}
	names := []string{"ada", "", "grace"}
	results := make([]outcome, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		cs, h := connectHost(t, url, name, true)
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
				Meta: mcp.Meta{"progressToken": "tok-" + strconv.Itoa(i)}})
			results[i] = outcome{res, err, h}
		})
	}
	wg.Wait()
	for i, name := range names {
		o := results[i]
		if o.err != nil {
			t.Fatalf("%q: %v", name, o.err)
		}
		text := o.res.Content[0].(*mcp.TextContent).Text
		want, action := "accept "+name+"; model said hello from "+name, "action accept"
		if name == "" {
			want, action = "decline <nil>; model said hello from ", "action decline"
		}
		if len(o.res.Content) != 3 {
			t.Fatalf("%q: %d content blocks, want the observation, the text and the image", name, len(o.res.Content))
		}
		if up := o.res.Content[1].(*mcp.TextContent).Text; up != want {
			t.Errorf("%q: the upstream answered %q, want %q", name, up, want)
		}
		if !strings.Contains(text, "a person was asked, "+action) {
			t.Errorf("%q: the observation does not record the elicitation: %s", name, text)
		}
		img, ok := o.res.Content[2].(*mcp.ImageContent)
		if !ok || string(img.Data) != "PNG" || img.MIMEType != "image/png" || img.Annotations == nil || len(img.Annotations.Audience) != 1 {
			t.Errorf("%q: the image block: %#v", name, o.res.Content[2])
		}
		select {
		case <-o.h.progressed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: no progress notification within 10 s of the answer", name)
		}
		o.h.mu.Lock()
		if got := strings.Join(o.h.progress, ","); got != fmt.Sprintf("tok-%d done", i) {
			t.Errorf("%q: progress %q, want only its own token's", name, got)
		}
		if got := strings.Join(o.h.logs, ","); got != "asking" {
			t.Errorf("%q: logs %q", name, got)
		}
		o.h.mu.Unlock()
	}

	// A host that declared neither elicitation nor sampling is not asked.
	cs, _ := connectHost(t, url, "nobody", false)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if up := res.Content[1].(*mcp.TextContent).Text; !strings.HasPrefix(up, "elicitation failed") || !strings.HasSuffix(up, "sampling failed") {
		t.Errorf("without the capabilities the upstream answered %q", up)
	}
}
