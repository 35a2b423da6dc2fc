//lint:file-ignore SA1019 logging is deprecated as of MCP 2026-07-28 (SEP-2577), but toolgate relays it for the revisions that have it (docs/mcp-upstreams.md, "What reaches the MCP client").

package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/mcpserver"
)

// everythingGateway is toolgate fronting the npm server-everything over
// stdio, with the tools the tests below call, served over /mcp.
func everythingGateway(t *testing.T) string {
	t.Helper()
	index := npmfixture.Path(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	bin := filepath.Join(filepath.Dir(index), "..", "..", "..", ".bin", "mcp-server-everything")
	tools := []string{"trigger-long-running-operation", "toggle-simulated-logging",
		"get-tiny-image", "get-annotated-message", "get-resource-links", "get-resource-reference"}
	text := "store: memory\ndependencies:\n  every:\n    mcp: {command: [" + strconv.Quote(bin) + "]}\n" +
		"    import: {prefix: ev_, tools: [" + strings.Join(tools, ", ") + "]}\ntools:\n"
	for _, name := range tools {
		// A call that sends a progressToken or declares roots (the Go
		// SDK's client does by default) starts a node process of its own:
		// room for a loaded machine.
		text += "  ev_" + name + ": {timeout: {connect: 30s, read: 30s}}\n"
	}
	gw := gateway(t, text)
	_, url := httpEndpoint(t, gw, mcpserver.Options{})
	return url
}

// listener is an MCP host's record of the notifications it got.
type listener struct {
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	changed  chan struct{} // a notification was kept
}

// note wakes wait after a notification was kept.
func (l *listener) note() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// wait returns once enough holds (called with l.mu held), or fails the
// test after 10 s: the client's SDK hands notifications to their handlers
// on a goroutine of its own, so one forwarded before the result may be
// handled just after CallTool returns.
func (l *listener) wait(t *testing.T, what string, enough func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		ok := enough()
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.changed:
		case <-deadline.C:
			t.Fatalf("no %s reached the client", what)
		}
	}
}

// connectListener opens a session to toolgate (2025-11-25) that keeps the
// progress and log notifications it gets, with its log level at debug.
func connectListener(t *testing.T, url string) (*mcp.ClientSession, *listener) {
	t.Helper()
	l := &listener{changed: make(chan struct{}, 1)}
	cs := catalogueClient(t, url, "", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			l.mu.Lock()
			l.progress = append(l.progress, r.Params)
			l.mu.Unlock()
			l.note()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			l.mu.Lock()
			l.logs = append(l.logs, r.Params)
			l.mu.Unlock()
			l.note()
		},
	})
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return cs, l
}

// TestEverythingProgressThroughToolgate: server-everything's
// trigger-long-running-operation, called through toolgate with the
// client's own progressToken, sends one progress notification a step; the
// client gets all of them, with its token, before the result.
func TestEverythingProgressThroughToolgate(t *testing.T) {
	cs, l := connectListener(t, everythingGateway(t))
	const token = "host-token-7"
	res, env := mustCall(t, cs, "ev_trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3},
		mcp.Meta{"progressToken": token})
	if !env.OK || len(res.Content) != 2 || !strings.Contains(res.Content[1].(*mcp.TextContent).Text, "Steps: 3") {
		t.Fatalf("the call: ok=%v %s", env.OK, mustJSON(t, res.Content))
	}
	l.wait(t, "third progress notification", func() bool { return len(l.progress) >= 3 })
	l.mu.Lock()
	defer l.mu.Unlock()
	var got []string
	for _, p := range l.progress {
		got = append(got, fmt.Sprintf("%v %v/%v", p.ProgressToken, p.Progress, p.Total))
	}
	if want := token + " 1/3," + token + " 2/3," + token + " 3/3"; strings.Join(got, ",") != want {
		t.Errorf("progress notifications %q, want %q", strings.Join(got, ","), want)
	}
}

// TestEverythingLoggingThroughToolgate: server-everything's
// toggle-simulated-logging sends a log message at once when it turns
// logging on; called through toolgate on a call of its own (the client sent
// a progressToken), the client gets that notifications/message.
func TestEverythingLoggingThroughToolgate(t *testing.T) {
	cs, l := connectListener(t, everythingGateway(t))
	_, env := mustCall(t, cs, "ev_toggle-simulated-logging", map[string]any{}, mcp.Meta{"progressToken": 1})
	if !env.OK || !strings.Contains(string(env.Data), "Started simulated") {
		t.Fatalf("the call: ok=%v %s %s", env.OK, env.Data, env.Observation)
	}
	l.wait(t, "notifications/message", func() bool { return len(l.logs) > 0 })
	l.mu.Lock()
	defer l.mu.Unlock()
	// The server picks one of eight levels at random.
	message := regexp.MustCompile(`^(Debug|Info|Notice|Warning|Error|Critical|Emergency)-level message$|^Alert level-message$`)
	for _, m := range l.logs {
		s, _ := m.Data.(string)
		if !message.MatchString(s) || !strings.EqualFold(strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' })[0], string(m.Level)) {
			t.Errorf("log message %+v is not the server's", m)
		}
	}
}

// TestEverythingContentThroughToolgate: server-everything's image,
// annotated, resource-link and embedded-resource answers reach a real MCP
// client through toolgate block for block, after the observation, which
// describes them.
func TestEverythingContentThroughToolgate(t *testing.T) {
	cs := connectHTTP(t, everythingGateway(t), "")
	png := func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG")) }
	for _, tt := range []struct {
		tool  string
		args  map[string]any
		says  string
		check func(blocks []mcp.Content) bool
	}{
		{"get-tiny-image", nil, "1 image, image/png", func(c []mcp.Content) bool {
			img, ok := c[2].(*mcp.ImageContent)
			return len(c) == 4 && ok && img.MIMEType == "image/png" && png(img.Data)
		}},
		{"get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}, "1 image", func(c []mcp.Content) bool {
			text, ok1 := c[1].(*mcp.TextContent)
			img, ok2 := c[2].(*mcp.ImageContent)
			return len(c) == 3 && ok1 && ok2 && text.Text == "Error: Operation failed" &&
				text.Annotations != nil && text.Annotations.Priority == 1 && len(text.Annotations.Audience) == 2 &&
				img.Annotations != nil && img.Annotations.Priority == 0.5 && png(img.Data)
		}},
		{"get-resource-links", map[string]any{"count": 2}, "2 resource links", func(c []mcp.Content) bool {
			l1, ok1 := c[2].(*mcp.ResourceLink)
			l2, ok2 := c[3].(*mcp.ResourceLink)
			return len(c) == 4 && ok1 && ok2 && l1.Name == "Blob Resource 1" && l2.Name == "Text Resource 2" &&
				l2.MIMEType == "text/plain" && strings.HasSuffix(l2.URI, "/text/2")
		}},
		{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1}, "1 embedded resource", func(c []mcp.Content) bool {
			for _, b := range c {
				if r, ok := b.(*mcp.EmbeddedResource); ok {
					return r.Resource != nil && strings.HasSuffix(r.Resource.URI, "/text/1") && r.Resource.Text != ""
				}
			}
			return false
		}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			res, env := mustCall(t, cs, "ev_"+tt.tool, tt.args, nil)
			if !env.OK || !strings.Contains(env.Observation, tt.says) {
				t.Errorf("ok=%v observation %q, want it to say %q", env.OK, env.Observation, tt.says)
			}
			if len(res.Content) < 2 || !tt.check(res.Content) {
				t.Errorf("content blocks: %s", mustJSON(t, res.Content))
			}
		})
	}
}
