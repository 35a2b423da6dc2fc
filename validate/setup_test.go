package validate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// obj builds a schema from JSON, numbers exact (as json.Number; a YAML
// loader gives int64 or uint64, which Compile encodes just as exactly).
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := jsontext.DecodeObject(json.RawMessage(s))
	if err != nil {
		t.Fatalf("bad JSON literal %s: %v", s, err)
	}
	return m
}

// refundConfig is testdata/refund/toolgate.yaml built in Go: the contract's
// example plus a tool with nested arguments.
func refundConfig(t testing.TB) *config.Config {
	return &config.Config{
		Dependencies: map[string]*config.Dependency{
			"payments": {Name: "payments", BaseURL: "http://127.0.0.1:9001"},
			"shipping": {Name: "shipping", BaseURL: "http://127.0.0.1:9002"},
		},
		Tools: map[string]*config.Tool{
			"get_order": {
				Description: "Look up one order.",
				Dependency:  "payments",
				Request:     &config.Request{Method: "GET", Path: "/orders/{order_id}"},
				Effect:      types.EffectRead,
				InputSchema: obj(t, `{"type":"object","required":["order_id"],
					"properties":{"order_id":{"type":"string"}},"additionalProperties":false}`),
			},
			"list_refunds": {
				Description: "List the refunds of an order.",
				Dependency:  "payments",
				Request:     &config.Request{Method: "GET", Path: "/orders/{order_id}/refunds"},
				Effect:      types.EffectRead,
				InputSchema: obj(t, `{"type":"object","required":["order_id"],
					"properties":{"order_id":{"type":"string"}}}`),
			},
			"issue_refund": {
				Description: "Refund part or all of an order to the customer.",
				Dependency:  "payments",
				Request:     &config.Request{Method: "POST", Path: "/refunds"},
				Effect:      types.EffectWrite,
				Permission:  "refunds:write",
				InputSchema: obj(t, `{"type":"object","required":["order_id","amount_paise"],
					"properties":{
						"order_id":{"type":"string","pattern":"^ORD-[0-9]+$","description":"The order id, like ORD-4471."},
						"amount_paise":{"type":"integer","minimum":1},
						"reason":{"type":"string","enum":["damaged","late","goodwill"]}},
					"additionalProperties":false}`),
				Idempotency: config.Idempotency{Key: "refund:{order_id}:{amount_paise}:{run_id}", Header: "Idempotency-Key"},
				Rules: []config.Rule{
					{
						Deny:    "args.amount_paise > principal.limits.max_refund_paise",
						Code:    "over_limit",
						Message: "Refund of {args.amount_paise} paise exceeds the {principal.limits.max_refund_paise} paise limit. Ask for approval with request_approval instead of retrying.",
					},
					{
						Deny:     "args.amount_paise > 450000",
						Approval: true,
						Message:  "Refunds above 450000 paise need a supervisor; the refund of {amount_paise} paise on {order_id} is held for approval.",
					},
					{
						Deny:    "has(args.reason) && args.reason == 'goodwill' && state.goodwill_refunds >= 1",
						Message: "Order {order_id} already had a goodwill refund this run. Do not retry; offer something else or escalate.",
					},
				},
				Owner: &config.Lookup{
					Lookup: "get_order",
					Args:   map[string]string{"order_id": "args.order_id"},
					Expect: "result.customer_id == principal.id",
				},
				Verify: &config.Lookup{
					Lookup: "list_refunds",
					Args:   map[string]string{"order_id": "args.order_id"},
					Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
				},
				State: map[string]string{
					"refund_id":      "result.refund_id",
					"refunded_paise": "state.?refunded_paise.orValue(0) + args.amount_paise",
				},
			},
			"ship_order": {
				Description: "Ship an order.",
				Dependency:  "shipping",
				Request:     &config.Request{Method: "POST", Path: "/shipments"},
				Effect:      types.EffectIdempotent,
				InputSchema: obj(t, `{"type":"object","required":["order_id","address","items"],
					"properties":{
						"order_id":{"type":"string"},
						"address":{"type":"object","required":["city","zip"],
							"properties":{"city":{"type":"string","minLength":2},"zip":{"type":"string","pattern":"^[0-9]{6}$"}},
							"additionalProperties":false},
						"items":{"type":"array","minItems":1,"items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1,"maximum":10}}}},
						"contact":{"type":"string","format":"email"},
						"note":{"type":["string","null"],"maxLength":5},
						"weight_kg":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},
						"count":{"type":"integer","minimum":9007199254740993}},
					"additionalProperties":false}`),
			},
			"ping": {
				Description: "A Go-function tool with no arguments.",
				Func:        func(_ context.Context, _ json.RawMessage) (any, error) { return "pong", nil },
			},
		},
	}
}

// setup compiles refundConfig.
func setup(t testing.TB) *Validator {
	t.Helper()
	v, err := Compile(refundConfig(t), nil)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return v
}

// alice may refund up to 500000 paise.
var alice = &types.Principal{
	ID:          "cust_42",
	Permissions: []string{"refunds:write"},
	Limits:      map[string]json.Number{"max_refund_paise": "500000"},
}

// bob holds no permissions.
var bob = &types.Principal{ID: "cust_7"}

// limitless may refund but has no limits, so the limit rule cannot be
// evaluated.
var limitless = &types.Principal{ID: "cust_9", Permissions: []string{"refunds:write"}}
