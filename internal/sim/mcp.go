package sim

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OperationKeyMeta is the _meta key of tools/call in which toolgate sends a
// write's operation key; the MCP face honours it like Idempotency-Key when
// HonourKeys is set.
const OperationKeyMeta = "toolgate/operation_key"

// MCPServer is the provider's MCP face, written with the official Go SDK:
// get_order and list_refunds (read-only) and create_refund (no
// annotations: a write), over the same orders and refunds as ServeHTTP,
// with the same delays.
func (p *Payments) MCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "payments-sim", Version: "1"}, nil)
	read := &mcp.ToolAnnotations{ReadOnlyHint: true}
	order := json.RawMessage(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string"}},"additionalProperties":false}`)
	s.AddTool(&mcp.Tool{Name: "get_order", Description: "Look up one order.", Annotations: read, InputSchema: order}, p.mcpGetOrder)
	s.AddTool(&mcp.Tool{Name: "list_refunds", Description: "List the refunds of one order.", Annotations: read, InputSchema: order}, p.mcpListRefunds)
	s.AddTool(&mcp.Tool{Name: "create_refund", Description: "Refund part or all of an order to the customer.",
		InputSchema: json.RawMessage(`{"type":"object","required":["order_id","amount_paise"],"properties":{` +
			`"order_id":{"type":"string","pattern":"^ORD-[0-9]+$"},"amount_paise":{"type":"integer","minimum":1},"reason":{"type":"string"}},"additionalProperties":false}`)},
		p.mcpCreateRefund)
	return s
}

// mcpGetOrder is the tool get_order: the order, counted as a read.
func (p *Payments) mcpGetOrder(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &in)
	o, ok := p.order(in.OrderID)
	if !ok {
		return toolError("order " + in.OrderID + " not found"), nil
	}
	return structured(o), nil
}

// mcpListRefunds is the tool list_refunds: the order's refunds, counted
// as a read.
func (p *Payments) mcpListRefunds(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &in)
	return structured(p.refundsOf(in.OrderID)), nil
}

// mcpCreateRefund is the tool create_refund: a refund as POST /refunds
// makes it, the _meta operation key standing for Idempotency-Key.
func (p *Payments) mcpCreateRefund(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		OrderID     string `json:"order_id"`
		AmountPaise int64  `json:"amount_paise"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.OrderID == "" || in.AmountPaise <= 0 {
		return toolError("want {order_id, amount_paise > 0}"), nil
	}
	key, _ := req.Params.Meta[OperationKeyMeta].(string)
	ref, status, msg := p.refund(in.OrderID, in.AmountPaise, key, ctx.Done())
	switch status {
	case 0:
		return nil, ctx.Err()
	case http.StatusOK:
		return structured(ref), nil
	}
	return toolError(msg), nil
}

// MCPHandler serves MCPServer over streamable HTTP.
type MCPHandler struct {
	http.Handler
	server *mcp.Server
}

// NewMCPHandler serves the provider's MCP face over streamable HTTP.
func (p *Payments) NewMCPHandler() *MCPHandler {
	s := p.MCPServer()
	return &MCPHandler{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), server: s}
}

// CloseSessions ends the sessions of clients that did not end theirs, so
// that an httptest server in front can close.
func (h *MCPHandler) CloseSessions() {
	for ss := range h.server.Sessions() {
		ss.Close()
	}
}

func structured(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
