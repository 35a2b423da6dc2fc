package pipeline_test

import (
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// refundsConfig is the refund incident's toolgate configuration (the one
// toolgate demo runs) against a provider at base: get_order, list_refunds
// and issue_refund, every duration divided by speed; honourKeys says the
// provider dedupes on Idempotency-Key, else issue_refund verifies with
// list_refunds.
func refundsConfig(base string, speed float64, honourKeys bool) *config.Config {
	d := func(x time.Duration) config.Duration { return config.Duration(time.Duration(float64(x) / speed)) }
	orderSchema := map[string]any{"type": "object", "required": []any{"order_id"},
		"properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "additionalProperties": false}
	refund := &config.Tool{
		Description: "Refund part or all of an order to the customer.",
		Dependency:  "payments",
		Request:     &config.Request{Method: "POST", Path: "/refunds"},
		Effect:      types.EffectWrite,
		Permission:  "refunds:write",
		InputSchema: map[string]any{
			"type": "object", "required": []any{"order_id", "amount_paise"}, "additionalProperties": false,
			"properties": map[string]any{
				"order_id":     map[string]any{"type": "string", "pattern": "^ORD-[0-9]+$"},
				"amount_paise": map[string]any{"type": "integer", "minimum": 1},
				"reason":       map[string]any{"type": "string"},
			},
		},
		Timeout:     config.Timeout{Connect: d(2 * time.Second), Read: d(5 * time.Second)},
		Retry:       config.Retry{MaxAttempts: 4, Base: d(time.Second), Cap: d(30 * time.Second)},
		Idempotency: config.Idempotency{Key: "refund:{order_id}:{amount_paise}:{run_id}"},
		Rules: []config.Rule{{
			Deny: "args.amount_paise > principal.limits.max_refund_paise", Code: "over_limit",
			Message: "Refund of {args.amount_paise} paise exceeds the {principal.limits.max_refund_paise} paise limit. Ask for approval instead of retrying.",
		}},
		Owner: &config.Lookup{Lookup: "get_order", Args: map[string]string{"order_id": "args.order_id"},
			Expect: "result.customer_id == principal.id"},
		State: map[string]string{
			"refund_id":      "result.refund_id",
			"refunded_paise": "state.refunded_paise + args.amount_paise",
		},
	}
	if honourKeys {
		refund.Idempotency.Header = "Idempotency-Key"
	} else {
		refund.Verify = &config.Lookup{Lookup: "list_refunds", Args: map[string]string{"order_id": "args.order_id"},
			Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
			Result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"}
	}
	return &config.Config{
		Store:        "memory",
		Dependencies: map[string]*config.Dependency{"payments": {BaseURL: base}},
		Tools: map[string]*config.Tool{
			"get_order": {Description: "Look up one order.", Dependency: "payments", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/orders/{order_id}"}, InputSchema: orderSchema,
				Timeout: config.Timeout{Connect: d(time.Second), Read: d(2 * time.Second)}},
			"list_refunds": {Description: "List the refunds of one order.", Dependency: "payments", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/orders/{order_id}/refunds"}, InputSchema: orderSchema,
				Timeout: config.Timeout{Connect: d(time.Second), Read: d(2 * time.Second)}},
			"issue_refund": refund,
		},
	}
}
