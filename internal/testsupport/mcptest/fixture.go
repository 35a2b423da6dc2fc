// Package mcptest is an MCP server written with the official Go SDK for the
// tests of toolgate's MCP client side: tools that answer, refuse, hang
// until cancelled, crash and change the tool list, with counters of what
// they received. It is served in process over streamable HTTP (Handler) or
// as a stdio subprocess (the mcptestserver command).
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OperationKeyMeta is the _meta key toolgate sends a write's operation key
// in (execute/mcpcall.OperationKeyMeta).
const OperationKeyMeta = "toolgate/operation_key"

// Counts is what the fixture has received.
type Counts struct {
	// Pay counts pay calls (the write that does something).
	Pay int `json:"pay"`
	// SlowRead and SlowWrite count the calls of the tools that hang.
	SlowRead  int `json:"slow_read"`
	SlowWrite int `json:"slow_write"`
	// Cancelled counts calls that ended because the client cancelled them
	// (notifications/cancelled).
	Cancelled int `json:"cancelled"`
	// Keys are the operation keys pay received in _meta, in order.
	Keys []string `json:"keys"`
	// PID is the serving process.
	PID int `json:"pid"`
}

// Fixture is the test server's state.
type Fixture struct {
	// Server is the MCP server.
	Server *mcp.Server
	// Cancelled receives one value each time a hanging call is cancelled
	// (buffered; tests of the in-process server read it).
	Cancelled chan string
	// Exit, when set, is what crash calls (os.Exit in the subprocess).
	Exit func(code int)

	mu       sync.Mutex
	counts   Counts
	extra    bool
	released chan struct{} // closed by CloseSessions: no call hangs any more
	once     sync.Once
}

// New returns the fixture with its tools.
func New() *Fixture {
	f := &Fixture{Cancelled: make(chan string, 16), Exit: os.Exit, released: make(chan struct{})}
	f.counts.PID = os.Getpid()
	f.Server = mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	read := &mcp.ToolAnnotations{ReadOnlyHint: true}
	f.add("echo", "Echo the arguments back as structured content.", read,
		`{"type":"object","properties":{"text":{"type":"string"},"amount":{"type":"integer"}},"additionalProperties":false}`, echo)
	f.add("pay", "Pay an amount for an order (a write: no annotations).", nil,
		`{"type":"object","required":["order_id","amount"],"properties":{"order_id":{"type":"string"},"amount":{"type":"integer","minimum":1}},"additionalProperties":false}`,
		f.pay)
	f.add("fail", "Always refuses, with isError.", read, `{"type":"object"}`, fail)
	f.add("slow_read", "A read whose first call hangs until cancelled; later calls answer at once.", read, `{"type":"object"}`, f.slowRead)
	f.add("slow_write", "A write that hangs until cancelled.", nil, `{"type":"object"}`, f.slowWrite)
	f.add("counts", "What the server has received.", read, `{"type":"object"}`, f.countsTool)
	f.add("crash", "Ends the server process at once (stdio only).", nil, `{"type":"object"}`,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.Exit(3)
			return &mcp.CallToolResult{}, nil
		})
	f.add("toggle_extra", "Adds the tool extra, or removes it (notifications/tools/list_changed).",
		&mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(bool)}, `{"type":"object"}`,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.ToggleExtra()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "toggled"}}}, nil
		})
	return f
}

// echo is the tool echo: the arguments, as structured content and as text.
func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := rawArgs(req)
	return &mcp.CallToolResult{StructuredContent: args, Content: []mcp.Content{&mcp.TextContent{Text: string(args)}}}, nil
}

// pay is the tool pay: it counts the payment and the operation key it was
// sent with, and answers a new payment id.
func (f *Fixture) pay(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		OrderID string      `json:"order_id"`
		Amount  json.Number `json:"amount"`
	}
	_ = json.Unmarshal(rawArgs(req), &in)
	key, _ := req.Params.Meta[OperationKeyMeta].(string)
	f.mu.Lock()
	f.counts.Pay++
	f.counts.Keys = append(f.counts.Keys, key)
	n := f.counts.Pay
	f.mu.Unlock()
	text := fmt.Sprintf(`{"payment_id":"PAY-%d","order_id":%q,"amount":%s}`, n, in.OrderID, in.Amount)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}

// fail is the tool fail: a refusal, with isError.
func fail(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "order ORD-1 is closed and cannot be changed"}}}, nil
}

// slowRead is the tool slow_read: its first call hangs until cancelled,
// later ones answer at once.
func (f *Fixture) slowRead(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	f.counts.SlowRead++
	first := f.counts.SlowRead == 1
	f.mu.Unlock()
	if first {
		f.hang(ctx, "slow_read")
		return nil, ctx.Err()
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"fresh":true}`}}}, nil
}

// slowWrite is the tool slow_write: every call is counted and hangs until
// cancelled.
func (f *Fixture) slowWrite(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	f.counts.SlowWrite++
	f.mu.Unlock()
	f.hang(ctx, "slow_write")
	return nil, ctx.Err()
}

// countsTool is the tool counts: the Counts, as structured content.
func (f *Fixture) countsTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	b, _ := json.Marshal(f.counts)
	f.mu.Unlock()
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b)}, nil
}

// ToggleExtra adds the tool extra when it is absent and removes it when
// present; the SDK tells the clients with notifications/tools/list_changed.
func (f *Fixture) ToggleExtra() {
	f.mu.Lock()
	f.extra = !f.extra
	on := f.extra
	f.mu.Unlock()
	if !on {
		f.Server.RemoveTools("extra")
		return
	}
	f.add("extra", "A tool that comes and goes.", &mcp.ToolAnnotations{ReadOnlyHint: true}, `{"type":"object"}`,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"extra":true}`}}}, nil
		})
}

// Counts returns what the fixture has received.
func (f *Fixture) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts
	c.Keys = append([]string(nil), f.counts.Keys...)
	return c
}

// Handler serves the fixture over streamable HTTP.
func (f *Fixture) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.Server }, nil)
}

// hang waits until the call is cancelled, and records it (or until the
// fixture is shut down).
func (f *Fixture) hang(ctx context.Context, tool string) {
	select {
	case <-ctx.Done():
	case <-f.released:
		return
	}
	f.mu.Lock()
	f.counts.Cancelled++
	f.mu.Unlock()
	select {
	case f.Cancelled <- tool:
	default:
	}
}

func (f *Fixture) add(name, description string, ann *mcp.ToolAnnotations, schema string, h mcp.ToolHandler) {
	f.Server.AddTool(&mcp.Tool{Name: name, Description: description, Annotations: ann, InputSchema: json.RawMessage(schema)}, h)
}

func rawArgs(req *mcp.CallToolRequest) json.RawMessage {
	a := bytes.TrimSpace(req.Params.Arguments)
	if len(a) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(a)
}

// CloseSessions ends every hanging call and every session the server holds
// (those of clients that vanished without ending theirs). Call it before
// closing an HTTP server in front, which waits for its handlers.
func (f *Fixture) CloseSessions() {
	f.once.Do(func() { close(f.released) })
	for ss := range f.Server.Sessions() {
		ss.Close()
	}
}
