package soak

import (
	"fmt"
	"strings"
	"time"
)

// The soak's four write tools: half send their operation key in
// Idempotency-Key to the endpoint that honours it, half go to the endpoint
// that does not and have a verify read instead. In each half one tool keys
// its operations by a template and one by toolgate's default (a hash of
// run, tool and arguments).
const (
	ToolKeyed        = "refund_keyed"
	ToolKeyedHash    = "refund_keyed_hash"
	ToolVerified     = "refund_verified"
	ToolVerifiedHash = "refund_verified_hash"
)

// Tools are the write tools, in the order operations take them.
var Tools = []string{ToolKeyed, ToolKeyedHash, ToolVerified, ToolVerifiedHash}

// keyHonoured says the tool's key is honoured by the provider.
func keyHonoured(tool string) bool { return tool == ToolKeyed || tool == ToolKeyedHash }

// configYAML is the soak's toolgate.yaml; PROVIDER, READ and the breaker
// settings are filled in by Config.
const configYAML = `# The fault-injection soak's toolgate.yaml (written by bench/soak).
store: "sqlite:toolgate.db"
dependencies:
  keyed:
    base_url: "PROVIDER"
    breaker: {threshold: BREAKER, cooldown: COOLDOWN}
  plain:
    base_url: "PROVIDER"
    breaker: {threshold: BREAKER, cooldown: COOLDOWN}
tools:
  list_refunds:
    description: List the refunds of one order (the verify read).
    dependency: plain
    request: {method: GET, path: "/orders/{order_id}/refunds"}
    effect: read
    input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}}
    timeout: {connect: 1s, read: 2s}
    retry: {max_attempts: 3, base: 10ms, cap: 50ms}
` + writeTool + `
` + writeTool + `
` + writeTool + `
` + writeTool

// writeTool is one write tool's YAML; NAME, DEP, PATH and EXTRA vary.
const writeTool = `  NAME:
    description: Refund an order (the soak's write).
    dependency: DEP
    request: {method: POST, path: PATH}
    effect: write
    input_schema:
      type: object
      required: [order_id, amount_paise]
      properties:
        order_id: {type: string, pattern: "^ORD-[0-9]+$"}
        amount_paise: {type: integer, minimum: 1}
      additionalProperties: false
    timeout: {connect: 1s, read: READ}
    retry: {max_attempts: 3, base: 20ms, cap: 100ms}
    state:
      refunded_paise: "state.refunded_paise + args.amount_paise"
      refunds: "state.refunds + 1"
EXTRA`

// Config returns the soak's toolgate.yaml for a provider at url, with the
// write tools' read timeout.
func Config(url string, read time.Duration) string {
	extras := map[string]string{
		ToolKeyed:     `    idempotency: {key: "keyed:{order_id}:{run_id}", header: Idempotency-Key}`,
		ToolKeyedHash: `    idempotency: {header: Idempotency-Key}`,
		ToolVerified: `    idempotency: {key: "plain:{order_id}:{run_id}"}
    verify:
      lookup: list_refunds
      args: {order_id: "args.order_id"}
      found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"
      result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"`,
		ToolVerifiedHash: `    verify:
      lookup: list_refunds
      args: {order_id: "args.order_id"}
      found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"`,
	}
	out := configYAML
	for _, name := range Tools {
		dep, path := "plain", "/plain/refunds"
		if keyHonoured(name) {
			dep, path = "keyed", "/keyed/refunds"
		}
		tool := strings.NewReplacer("NAME", name, "DEP", dep, "PATH", path, "EXTRA", extras[name]).Replace(writeTool)
		out = strings.Replace(out, writeTool, tool, 1)
	}
	return strings.NewReplacer("PROVIDER", url, "READ", read.String(),
		"BREAKER", fmt.Sprint(breakerThreshold), "COOLDOWN", breakerCooldown.String()).Replace(out)
}

// The breaker of both dependencies: it opens now and then under the soak's
// failure rate (37% of writes fail, 0.37^8: a few times per 10,000 calls), so circuit_open answers are part of
// the mix, but it closes again quickly.
const (
	breakerThreshold = 8
	breakerCooldown  = 200 * time.Millisecond
)
