package validate_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

func ExampleValidator_Check() {
	cfg := &config.Config{
		Dependencies: map[string]*config.Dependency{"payments": {BaseURL: "http://127.0.0.1:9001"}},
		Tools: map[string]*config.Tool{
			"issue_refund": {
				Dependency: "payments",
				Request:    &config.Request{Method: "POST", Path: "/refunds"},
				Permission: "refunds:write",
				InputSchema: map[string]any{
					"type":     "object",
					"required": []any{"order_id", "amount_paise"},
					"properties": map[string]any{
						"order_id":     map[string]any{"type": "string", "pattern": "^ORD-[0-9]+$"},
						"amount_paise": map[string]any{"type": "integer", "minimum": 1},
					},
					"additionalProperties": false,
				},
				Rules: []config.Rule{{
					Deny:    "args.amount_paise > principal.limits.max_refund_paise",
					Code:    "over_limit",
					Message: "Refund of {amount_paise} paise exceeds the {principal.limits.max_refund_paise} paise limit.",
				}},
			},
		},
	}
	v, err := validate.Compile(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := &types.Principal{
		ID:          "cust_42",
		Permissions: []string{"refunds:write"},
		Limits:      map[string]json.Number{"max_refund_paise": "500000"},
	}
	for _, args := range []string{
		`{"order_id": "ORD-4471", "amount": 425000}`,
		`{"order_id": "ORD-4471", "amount_paise": "425000"}`,
		`{"order_id": "ORD-4471", "amount_paise": 900000}`,
		`{"amount_paise": 425000, "order_id": "ORD-4471"}`,
	} {
		checked, refusal := v.Check(&validate.Input{Tool: "issue_refund", Args: json.RawMessage(args), Principal: agent, RunID: "r1"})
		if refusal != nil {
			fmt.Printf("%s: %s\n", refusal.Code, refusal.Message)
			continue
		}
		fmt.Printf("ok: %s %s\n", checked.Canonical, checked.ArgsHash)
	}
	// Output:
	// missing_arguments: issue_refund needs the required argument amount_paise (integer), which is missing. You supplied: amount, order_id. Supply every required argument and call again.
	// wrong_type: Argument amount_paise of issue_refund must be an integer, got string "425000". Send it as a JSON number without quotes: 425000. Fix the arguments and call again.
	// over_limit: Refund of 900000 paise exceeds the 500000 paise limit.
	// ok: {"amount_paise":425000,"order_id":"ORD-4471"} 496f22cfb1b3cfc612eb57babd4843d1
}
