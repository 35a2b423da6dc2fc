package mcpcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/types"
)

func TestAnswer(t *testing.T) {
	tests := []struct {
		name, raw, data, text, content string
	}{
		{"structured content wins, numbers exact", `{"structuredContent":{"n":9007199254740993},"content":[{"type":"text","text":"nine"}]}`, `{"n":9007199254740993}`, "nine", `[{"type":"text","text":"nine"}]`},
		{"one JSON text", `{"content":[{"type":"text","text":" {\"a\": [1, 2]} "}]}`, `{"a":[1,2]}`, `{"a": [1, 2]}`, `[{"type":"text","text":" {\"a\": [1, 2]} "}]`},
		{"plain text", `{"content":[{"type":"text","text":"done"}]}`, `"done"`, "done", `[{"type":"text","text":"done"}]`},
		{"several texts", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, `"a\nb"`, "a b", `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
		// Not only text: the text is the data, every block is kept as sent
		// (annotations and fields the SDK does not know included).
		{"not only text", `{"content":[{"type":"text","text":"see"},{"type":"image","data":"AA==","mimeType":"image/png","annotations":{"audience":["user"]},"x-new":1}]}`, `"see"`, "see", `[{"type":"text","text":"see"},{"type":"image","data":"AA==","mimeType":"image/png","annotations":{"audience":["user"]},"x-new":1}]`},
		{"an image alone", `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, `null`, "", `[{"type":"image","data":"AA==","mimeType":"image/png"}]`},
		{"nothing", `{"content":[]}`, `null`, "", ``},
		{"null structured content", `{"structuredContent":null,"content":[{"type":"text","text":"x"}]}`, `"x"`, "x", `[{"type":"text","text":"x"}]`},
	}
	for _, tt := range tests {
		data, text, content, err := answer(nil, json.RawMessage(tt.raw))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(data) != tt.data || text != tt.text || string(content) != tt.content {
			t.Errorf("%s: data %s text %q content %s, want %s %q %s", tt.name, data, text, content, tt.data, tt.text, tt.content)
		}
	}
	// Without the raw answer, the SDK's decoding is read.
	data, _, _, err := answer(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil)
	if err != nil || string(data) != `{"ok":true}` {
		t.Errorf("from the SDK's result: %s %v", data, err)
	}
}

func TestCallFailure(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	timedOut, stop := context.WithTimeoutCause(context.Background(), time.Nanosecond, errReadTimeout)
	defer stop()
	<-timedOut.Done()
	tests := []struct {
		name      string
		parent    context.Context
		rctx      context.Context
		sent      bool
		err       error
		kind      execute.Kind
		code      types.Code
		delivered bool
		transient bool
	}{
		{"not written", live, live, false, errors.New("broken pipe"), execute.KindConnectFailed, types.CodeConnectFailed, false, true},
		{"not written: rejected by transport", live, live, false, &jsonrpc.Error{Code: jsonrpc2Rejected, Message: "rejected by transport"}, execute.KindConnectFailed, types.CodeConnectFailed, false, true},
		{"caller gone before writing", gone, gone, false, context.Canceled, execute.KindCanceled, types.CodeUnavailable, false, false},
		{"read timeout", live, timedOut, true, context.DeadlineExceeded, execute.KindReadTimeout, types.CodeTimeoutUnknownOutcome, true, true},
		{"caller gone after writing", gone, gone, true, context.Canceled, execute.KindCanceled, types.CodeTimeoutUnknownOutcome, true, false},
		{"session broke after writing", live, live, true, fmt.Errorf("x: %w", mcp.ErrConnectionClosed), execute.KindReset, types.CodeTimeoutUnknownOutcome, true, true},
		{"invalid params", live, live, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}, execute.KindToolError, types.CodeRejected, true, false},
		{"internal error", live, live, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "boom"}, execute.KindToolError, types.CodeUpstreamError, true, true},
	}
	for _, tt := range tests {
		f := callFailure(tt.parent, tt.rctx, "dep", "tool", time.Second, tt.sent, tt.err)
		if f.Kind != tt.kind || f.Code != tt.code || f.Delivered != tt.delivered || f.Transient != tt.transient {
			t.Errorf("%s: kind %s code %s delivered %v transient %v; want %s %s %v %v", tt.name, f.Kind, f.Code, f.Delivered, f.Transient, tt.kind, tt.code, tt.delivered, tt.transient)
		}
	}
}

func TestConnectFailure(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		parent context.Context
		err    error
		kind   execute.Kind
		code   types.Code
	}{
		{"timeout", context.Background(), context.DeadlineExceeded, execute.KindConnectTimeout, types.CodeConnectTimeout},
		{"other", context.Background(), errors.New("exec: no such file"), execute.KindConnectFailed, types.CodeConnectFailed},
		{"caller gone", gone, context.Canceled, execute.KindCanceled, types.CodeUnavailable},
		{"shutting down", context.Background(), errClosed, execute.KindConnectFailed, types.CodeUnavailable},
	}
	for _, tt := range tests {
		f := connectFailure(tt.parent, "dep", time.Second, tt.err)
		if f.Kind != tt.kind || f.Code != tt.code || f.Delivered {
			t.Errorf("%s: kind %s code %s delivered %v; want %s %s false", tt.name, f.Kind, f.Code, f.Delivered, tt.kind, tt.code)
		}
	}
}
