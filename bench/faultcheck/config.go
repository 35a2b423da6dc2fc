package faultcheck

import (
	"strings"
	"time"
)

// The scenario's tools.
const (
	// ToolRead lists an order's refunds (also the verify read).
	ToolRead = "list_refunds"
	// ToolVerified refunds without a key the provider honours: after an
	// unknown outcome it is settled by its verify read, never re-sent.
	ToolVerified = "issue_refund"
	// ToolKeyed refunds under an Idempotency-Key the provider honours:
	// after an unknown outcome it is re-sent under the same key.
	ToolKeyed = "refund_keyed"
	// ToolMCP refunds through the provider's MCP server (Options.MCP):
	// after an unknown outcome it is settled by its verify read.
	ToolMCP = "mcp_create_refund"
)

// Budgets are the tools' total timeouts (timeout.total in Config): every
// answer must come within its tool's budget plus Slack.
var Budgets = map[string]time.Duration{
	ToolRead:     4 * time.Second,
	ToolVerified: 3 * time.Second,
	ToolKeyed:    3 * time.Second,
	ToolMCP:      3 * time.Second,
}

// Slack is how far past its budget an answer may come (docs/reliability.md).
const Slack = 2 * time.Second

// configYAML is the scenario's toolgate.yaml; STORE and PROVIDER are
// filled in by Config. The breaker's cooldown is short so that calls
// succeed again within seconds of a fault's end.
const configYAML = `# toolgate.yaml of a fault run (written by bench/faultcheck).
store: "STORE"
dependencies:
  payments: {base_url: "PROVIDER", breaker: {threshold: 5, cooldown: 1s}}
  payments_keyed: {base_url: "PROVIDER", breaker: {threshold: 5, cooldown: 1s}}
tools:
  list_refunds:
    description: List the refunds of one order.
    dependency: payments
    request: {method: GET, path: "/orders/{order_id}/refunds"}
    effect: read
    input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}}
    timeout: {connect: 500ms, read: 1s, total: 4s}
    retry: {max_attempts: 3, base: 20ms, cap: 100ms}
  issue_refund:
    description: Refund part of an order (the provider does not honour keys).
    dependency: payments
    request: {method: POST, path: /refunds}
    effect: write
    input_schema: &refund_args
      type: object
      required: [order_id, amount_paise]
      properties:
        order_id: {type: string, pattern: "^ORD-[0-9]+$"}
        amount_paise: {type: integer, minimum: 1}
      additionalProperties: false
    timeout: {connect: 500ms, read: 1s, total: 3s}
    retry: {max_attempts: 2, base: 20ms, cap: 100ms}
    verify:
      lookup: list_refunds
      args: {order_id: "args.order_id"}
      found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"
      result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"
    state:
      refunded_paise: "state.refunded_paise + args.amount_paise"
  refund_keyed:
    description: Refund part of an order under an Idempotency-Key the provider honours.
    dependency: payments_keyed
    request: {method: POST, path: /refunds}
    effect: write
    input_schema: *refund_args
    timeout: {connect: 500ms, read: 1s, total: 3s}
    retry: {max_attempts: 3, base: 20ms, cap: 100ms}
    idempotency: {key: "keyed:{order_id}:{amount_paise}:{run_id}", header: Idempotency-Key}
    state:
      keyed_paise: "state.keyed_paise + args.amount_paise"
`

// mcpYAML adds the provider's MCP server as a dependency (its tools
// prefixed mcp_) to configYAML: a dependencies: entry and tools: entries.
const mcpDependency = `  payments_mcp:
    mcp: {url: "PROVIDER/mcp"}
    import: {tools: ["create_refund", "list_refunds"], prefix: "mcp_"}
    breaker: {threshold: 5, cooldown: 1s}
`

const mcpTools = `  mcp_create_refund:
    effect: write
    timeout: {connect: 500ms, read: 1s, total: 3s}
    retry: {max_attempts: 2, base: 20ms, cap: 100ms}
    verify:
      lookup: mcp_list_refunds
      args: {order_id: "args.order_id"}
      found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"
      result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"
    state:
      mcp_paise: "state.mcp_paise + args.amount_paise"
  mcp_list_refunds:
    timeout: {connect: 500ms, read: 1s, total: 4s}
    retry: {max_attempts: 3, base: 20ms, cap: 100ms}
`

// Config is the toolgate.yaml of a fault run: store is the config's
// store: string, provider the provider's base URL (through the proxy);
// withMCP adds the provider's MCP server and its refund tool.
func Config(store, provider string, withMCP bool) string {
	yaml := configYAML
	if withMCP {
		yaml = strings.Replace(yaml, "tools:\n", mcpDependency+"tools:\n", 1) + mcpTools
	}
	return strings.NewReplacer("STORE", store, "PROVIDER", provider).Replace(yaml)
}
