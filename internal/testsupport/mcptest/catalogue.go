package mcptest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalogue is an MCP server with resources, a resource template,
// prompts, completions and subscriptions (and one tool, echo), for the
// tests of the resources and prompts toolgate serves from imported
// servers. It counts what it received.
type Catalogue struct {
	// Server is the MCP server.
	Server *mcp.Server

	mu         sync.Mutex
	reads      []string // URIs read, in order
	gets       []string // prompts got
	subscribed map[string]int
}

// The fixture's resources.
const (
	ReadmeURI = "test://docs/readme"
	SecretURI = "test://docs/secret"
	BrokenURI = "test://docs/broken" // its read fails with an internal error
	OrderTmpl = "test://orders/{id}"
)

// NewCatalogue returns the fixture.
func NewCatalogue() *Catalogue {
	c := &Catalogue{subscribed: map[string]int{}}
	c.Server = mcp.NewServer(&mcp.Implementation{Name: "mcptest-catalogue", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler:  c.complete,
		SubscribeHandler:   func(_ context.Context, r *mcp.SubscribeRequest) error { c.count(r.Params.URI, 1); return nil },
		UnsubscribeHandler: func(_ context.Context, r *mcp.UnsubscribeRequest) error { c.count(r.Params.URI, -1); return nil },
	})
	c.Server.AddTool(&mcp.Tool{Name: "echo", Description: "Echo.", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	c.AddText(ReadmeURI, "readme", "# Read me\nThe docs.")
	c.AddText(SecretURI, "secret", "the launch codes")
	c.Server.AddResource(&mcp.Resource{URI: BrokenURI, Name: "broken", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c.read(r.Params.URI)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the disk is on fire"}
		})
	c.Server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: OrderTmpl, Name: "order", MIMEType: "application/json"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c.read(r.Params.URI)
			id := strings.TrimPrefix(r.Params.URI, "test://orders/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "application/json", Text: `{"order_id":"` + id + `"}`}}}, nil
		})
	c.Server.AddPrompt(&mcp.Prompt{Name: "greeting", Description: "Greets someone.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			c.mu.Lock()
			c.gets = append(c.gets, r.Params.Name)
			c.mu.Unlock()
			return &mcp.GetPromptResult{Description: "A greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + r.Params.Arguments["name"] + "!"}}}}, nil
		})
	c.Server.AddPrompt(&mcp.Prompt{Name: "audit", Description: "An internal prompt."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "audit"}}}}, nil
		})
	return c
}

// AddText adds (or replaces) a text resource; the SDK tells the clients
// with notifications/resources/list_changed.
func (c *Catalogue) AddText(uri, name, text string) {
	c.Server.AddResource(&mcp.Resource{URI: uri, Name: name, MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c.read(r.Params.URI)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
}

// Updated sends notifications/resources/updated for uri to the sessions
// subscribed to it.
func (c *Catalogue) Updated(uri string) {
	_ = c.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// Reads are the URIs read so far, in order.
func (c *Catalogue) Reads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reads)
}

// Subscribed is how many subscriptions to uri the server holds.
func (c *Catalogue) Subscribed(uri string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subscribed[uri]
}

// Handler serves the fixture over streamable HTTP.
func (c *Catalogue) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.Server }, nil)
}

// CloseSessions ends the sessions the server holds.
func (c *Catalogue) CloseSessions() {
	for ss := range c.Server.Sessions() {
		ss.Close()
	}
}

func (c *Catalogue) read(uri string) {
	c.mu.Lock()
	c.reads = append(c.reads, uri)
	c.mu.Unlock()
}

func (c *Catalogue) count(uri string, d int) {
	c.mu.Lock()
	c.subscribed[uri] += d
	c.mu.Unlock()
}

// complete completes the greeting's name and the order template's id from
// fixed lists, by prefix.
func (c *Catalogue) complete(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var all []string
	switch {
	case r.Params.Ref.Type == "ref/prompt" && r.Params.Ref.Name == "greeting":
		all = []string{"Alice", "Albert", "Bob"}
	case r.Params.Ref.Type == "ref/resource" && r.Params.Ref.URI == OrderTmpl:
		all = []string{"ORD-1", "ORD-2"}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "nothing to complete for " + r.Params.Ref.Name + r.Params.Ref.URI}
	}
	var out []string
	for _, v := range all {
		if strings.HasPrefix(v, r.Params.Argument.Value) {
			out = append(out, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}
