package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// refusalCase is one call that must be refused.
type refusalCase struct {
	name      string
	tool      string
	args      string
	principal *types.Principal
	state     string
	code      types.Code
	field     string
	rule      int
	approval  bool
	// contains are fragments the message must hold.
	contains []string
	// excludes are fragments it must not hold.
	excludes []string
}

func runRefusals(t *testing.T, tests []refusalCase) {
	t.Helper()
	v := setup(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &Input{Tool: tt.tool, Args: json.RawMessage(tt.args), Principal: tt.principal, RunID: "r1", CallID: "toolu_1"}
			if in.Principal == nil {
				in.Principal = alice
			}
			if tt.state != "" {
				in.State = json.RawMessage(tt.state)
			}
			checked, r := v.Check(in)
			if r == nil {
				t.Fatalf("Check accepted the call (args %s), want %s", checked.Canonical, tt.code)
			}
			if (checked != nil) != (r.Rule >= 0) {
				t.Errorf("Check returned a Checked (%v) with a refusal of rule %d: only rule refusals carry one", checked != nil, r.Rule)
			}
			if r.Code != tt.code {
				t.Errorf("code = %s, want %s (message: %s)", r.Code, tt.code, r.Message)
			}
			if r.Field != tt.field {
				t.Errorf("field = %q, want %q", r.Field, tt.field)
			}
			if r.Rule != tt.rule {
				t.Errorf("rule = %d, want %d", r.Rule, tt.rule)
			}
			if r.Approval != tt.approval {
				t.Errorf("approval = %v, want %v", r.Approval, tt.approval)
			}
			for _, c := range tt.contains {
				if !strings.Contains(r.Message, c) {
					t.Errorf("message lacks %q:\n%s", c, r.Message)
				}
			}
			for _, c := range tt.excludes {
				if strings.Contains(r.Message, c) {
					t.Errorf("message holds %q:\n%s", c, r.Message)
				}
			}
			if strings.Contains(r.Message, "\n") {
				t.Errorf("message is not one line: %q", r.Message)
			}
		})
	}
}

// TestCheckRefusals covers every refusal code and what its message says.
func TestCheckRefusals(t *testing.T) {
	runRefusals(t, []refusalCase{
		{name: "unknown tool lists the tools sorted", tool: "refund", args: `{}`, code: types.CodeUnknownTool, rule: -1,
			contains: []string{`no tool named "refund"`, "Available tools: get_order, issue_refund, list_refunds, ping, ship_order.", "exact name"}},
		{name: "unknown tool suggests the closest", tool: "issue_refunds", args: `{}`, code: types.CodeUnknownTool, rule: -1,
			contains: []string{"Did you mean issue_refund?"}},
		{name: "no tool name", tool: "", args: `{}`, code: types.CodeUnknownTool, rule: -1,
			contains: []string{"No tool name was given", "Available tools:"}},
		{name: "args an array", tool: "issue_refund", args: `["ORD-1", 5]`, code: types.CodeWrongType, field: "args", rule: -1,
			contains: []string{"must be a JSON object", "got an array", `"order_id": …`, "Fix the arguments"}},
		{name: "args a string", tool: "issue_refund", args: `"ORD-1"`, code: types.CodeWrongType, field: "args", rule: -1,
			contains: []string{"got a string"}},
		{name: "args invalid JSON", tool: "issue_refund", args: `{"order_id": }`, code: types.CodeWrongType, field: "args", rule: -1,
			contains: []string{"invalid JSON"}},
		{name: "args with a repeated key", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5,"amount_paise":900000}`,
			code: types.CodeWrongType, field: "args", rule: -1, contains: []string{`key "amount_paise" appears twice`}},
		{name: "missing names all and what was supplied", tool: "issue_refund", args: `{"reason":"late"}`,
			code: types.CodeMissingArguments, field: "order_id", rule: -1,
			contains: []string{"required arguments order_id (string), amount_paise (integer), which are missing", "You supplied: reason.", "call again"}},
		{name: "missing one with nothing supplied", tool: "get_order", args: ``, code: types.CodeMissingArguments, field: "order_id", rule: -1,
			contains: []string{"required argument order_id (string), which is missing", "You supplied no arguments."}},
		{name: "null args read as none", tool: "get_order", args: `null`, code: types.CodeMissingArguments, field: "order_id", rule: -1},
		{name: "extras named with the valid ones", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5,"amount":5,"currency":"INR"}`,
			code: types.CodeUnknownArguments, field: "amount", rule: -1,
			contains: []string{"has no arguments amount (did you mean amount_paise?), currency.",
				"Valid arguments: order_id (string, required), amount_paise (integer, required), reason (string).", "Remove the unknown ones"}},
		{name: "extras without additionalProperties false", tool: "list_refunds", args: `{"order_id":"ORD-1","limit":5}`,
			code: types.CodeUnknownArguments, field: "limit", rule: -1, contains: []string{"has no argument limit."}},
		{name: "tool without arguments", tool: "ping", args: `{"x":1}`, code: types.CodeUnknownArguments, field: "x", rule: -1,
			contains: []string{"ping takes no arguments; call it with {}."}},
		{name: "wrong type with a quoted number", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":"425000"}`,
			code: types.CodeWrongType, field: "amount_paise", rule: -1,
			contains: []string{"Argument amount_paise of issue_refund must be an integer, got string \"425000\".", "without quotes: 425000", "Fix the arguments"}},
		{name: "wrong type fraction for integer", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":4250.5}`,
			code: types.CodeWrongType, field: "amount_paise", rule: -1, contains: []string{"must be an integer, got number 4250.5", "whole number"}},
		{name: "wrong type number for string", tool: "issue_refund", args: `{"order_id":4471,"amount_paise":5}`,
			code: types.CodeWrongType, field: "order_id", rule: -1, contains: []string{"must be a string, got integer 4471", `in quotes: "4471"`}},
		{name: "wrong type nested", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":411001},"items":[{"sku":"A"}]}`,
			code: types.CodeWrongType, field: "address.zip", rule: -1, contains: []string{"Argument address.zip of ship_order must be a string, got integer 411001"}},
		{name: "wrong type in array item", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"sku":"A"},{"sku":"B","qty":"2"}]}`,
			code: types.CodeWrongType, field: "items[1].qty", rule: -1, contains: []string{"items[1].qty", "must be an integer"}},
		{name: "type union", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"note":5}`,
			code: types.CodeWrongType, field: "note", rule: -1, contains: []string{"must be null or a string, got integer 5"}},
		{name: "pattern", tool: "issue_refund", args: `{"order_id":"4471","amount_paise":5}`,
			code: types.CodeInvalidArgument, field: "order_id", rule: -1,
			contains: []string{`Argument order_id of issue_refund is invalid: "4471" does not match the pattern ^ORD-[0-9]+$ (order_id: The order id, like ORD-4471). Fix the arguments`}},
		{name: "minimum", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":0}`,
			code: types.CodeInvalidArgument, field: "amount_paise", rule: -1, contains: []string{"0 is below the minimum 1"}},
		{name: "enum", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5,"reason":"angry"}`,
			code: types.CodeInvalidArgument, field: "reason", rule: -1,
			contains: []string{`"angry" is not one of the allowed values (enum): "damaged", "late", "goodwill"`}},
		{name: "min length nested", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"P","zip":"411001"},"items":[{}]}`,
			code: types.CodeInvalidArgument, field: "address.city", rule: -1, contains: []string{`"P" is 1 character long, shorter than the minimum length 2`}},
		{name: "max length", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"note":"too long"}`,
			code: types.CodeInvalidArgument, field: "note", rule: -1, contains: []string{"is 8 characters long, longer than the maximum length 5"}},
		{name: "min items", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[]}`,
			code: types.CodeInvalidArgument, field: "items", rule: -1, contains: []string{"it has 0 items, fewer than the minimum 1 (minItems)"}},
		{name: "maximum in array", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"qty":11}]}`,
			code: types.CodeInvalidArgument, field: "items[0].qty", rule: -1, contains: []string{"11 is above the maximum 10"}},
		{name: "format", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"contact":"nobody"}`,
			code: types.CodeInvalidArgument, field: "contact", rule: -1, contains: []string{`"nobody" is not a valid email (format)`}},
		{name: "exclusive minimum", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"weight_kg":0}`,
			code: types.CodeInvalidArgument, field: "weight_kg", rule: -1, contains: []string{"0 must be greater than 0 (exclusiveMinimum)"}},
		{name: "multiple of", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"weight_kg":1.2}`,
			code: types.CodeInvalidArgument, field: "weight_kg", rule: -1, contains: []string{"1.2 is not a multiple of 0.5"}},
		{name: "big minimum exact", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"count":9007199254740992}`,
			code: types.CodeInvalidArgument, field: "count", rule: -1, contains: []string{"9007199254740992 is below the minimum 9007199254740993"}},
		{name: "nested missing", tool: "ship_order", args: `{"order_id":"O1","address":{},"items":[{}]}`,
			code: types.CodeMissingArguments, field: "address", rule: -1, contains: []string{"Argument address of ship_order is missing the required fields city, zip."}},
		{name: "nested unknown", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001","state":"MH"},"items":[{}]}`,
			code: types.CodeUnknownArguments, field: "address", rule: -1, contains: []string{"Argument address of ship_order has unknown field state."}},
		{name: "huge exponent", tool: "ship_order", args: `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"qty":1e999999}]}`,
			code: types.CodeInvalidArgument, field: "items[0].qty", rule: -1, contains: []string{"outside the range toolgate accepts"}},
		{name: "forbidden", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5}`, principal: bob,
			code: types.CodeForbidden, rule: -1,
			contains: []string{"Principal cust_7 does not hold the permission refunds:write, which issue_refund requires.", "Do not retry", "escalate"}},
		{name: "rule over limit renders its message", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":600000}`,
			code: "over_limit", rule: 0,
			contains: []string{"Refund of 600000 paise exceeds the 500000 paise limit. Ask for approval with request_approval instead of retrying."}},
		{name: "approval rule", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":480000}`,
			code: types.CodeApprovalRequired, rule: 1, approval: true,
			contains: []string{"the refund of 480000 paise on ORD-1 is held for approval"}},
		{name: "rule without code", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5,"reason":"goodwill"}`,
			state: `{"goodwill_refunds":1}`, code: CodeRuleDenied, rule: 2,
			contains: []string{"Order ORD-1 already had a goodwill refund this run."}},
		{name: "rule error fails closed", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5}`, principal: limitless,
			code: CodeRuleError, rule: 0,
			contains: []string{"Rule rules[0] of issue_refund", "could not be evaluated", "max_refund_paise", "refused to be safe", "Do not retry"}},
		{name: "rule error on missing state", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5,"reason":"goodwill"}`,
			code: CodeRuleError, rule: 2, contains: []string{"no such key: goodwill_refunds"}},
	})
}

// TestCheckOrder proves each check runs before the next: every call below
// breaks two checks and must be refused by the earlier one.
func TestCheckOrder(t *testing.T) {
	runRefusals(t, []refusalCase{
		{name: "unknown tool before bad args", tool: "refund_issue", args: `[1, {"x": }`, principal: bob,
			code: types.CodeUnknownTool, rule: -1},
		{name: "args shape before anything else", tool: "issue_refund", args: `[1]`, principal: bob,
			code: types.CodeWrongType, field: "args", rule: -1},
		{name: "missing before extras", tool: "issue_refund", args: `{"order_id":"ORD-1","bogus":1}`,
			code: types.CodeMissingArguments, field: "amount_paise", rule: -1, excludes: []string{"bogus (did"}},
		{name: "extras before types", tool: "issue_refund", args: `{"order_id":5,"amount_paise":"x","bogus":1}`,
			code: types.CodeUnknownArguments, field: "bogus", rule: -1},
		{name: "types before constraints", tool: "issue_refund", args: `{"order_id":"bad","amount_paise":"5"}`,
			code: types.CodeWrongType, field: "amount_paise", rule: -1},
		{name: "types before constraints whatever the key order", tool: "issue_refund", args: `{"amount_paise":0,"order_id":17}`,
			code: types.CodeWrongType, field: "order_id", rule: -1},
		{name: "constraints before permission", tool: "issue_refund", args: `{"order_id":"bad","amount_paise":5}`, principal: bob,
			code: types.CodeInvalidArgument, field: "order_id", rule: -1},
		{name: "permission before rules", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":600000}`, principal: bob,
			code: types.CodeForbidden, rule: -1},
		{name: "rules in order: limit before approval", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":600000}`,
			code: "over_limit", rule: 0},
		{name: "rules in order: approval before later rules", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":480000,"reason":"goodwill"}`,
			state: `{"goodwill_refunds":3}`, code: types.CodeApprovalRequired, rule: 1, approval: true},
	})
}

func TestCheckAccepts(t *testing.T) {
	v := setup(t)
	tests := []struct {
		name, tool, args, canonical string
	}{
		{"contract refund", "issue_refund", `{"order_id":"ORD-4471","amount_paise":425000}`, `{"amount_paise":425000,"order_id":"ORD-4471"}`},
		{"whitespace and key order", "issue_refund", " {\"reason\":\"late\", \"amount_paise\" : 5,\n\"order_id\":\"ORD-1\"} ", `{"amount_paise":5,"order_id":"ORD-1","reason":"late"}`},
		{"integer written as 5.0 is made plain", "issue_refund", `{"order_id":"ORD-1","amount_paise":5.0}`, `{"amount_paise":5,"order_id":"ORD-1"}`},
		{"integer with exponent is made plain", "issue_refund", `{"order_id":"ORD-1","amount_paise":4.25e5}`, `{"amount_paise":425000,"order_id":"ORD-1"}`},
		{"number literal kept", "ship_order", `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"qty":2.0}],"weight_kg":1.50}`,
			`{"address":{"city":"Pune","zip":"411001"},"items":[{"qty":2.0}],"order_id":"O1","weight_kg":1.50}`},
		{"big integer exact", "ship_order", `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{"sku":"A","qty":2}],"count":9007199254740993}`,
			`{"address":{"city":"Pune","zip":"411001"},"count":9007199254740993,"items":[{"qty":2,"sku":"A"}],"order_id":"O1"}`},
		{"nullable string", "ship_order", `{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"note":null,"weight_kg":1.5}`,
			`{"address":{"city":"Pune","zip":"411001"},"items":[{}],"note":null,"order_id":"O1","weight_kg":1.5}`},
		{"no arguments", "ping", ``, `{}`},
		{"open extras", "list_refunds", `{"order_id":"ORD-1"}`, `{"order_id":"ORD-1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := v.Check(&Input{Tool: tt.tool, Args: json.RawMessage(tt.args), Principal: alice, RunID: "r1", CallID: "c1"})
			if r != nil {
				t.Fatalf("refused: %s: %s", r.Code, r.Message)
			}
			if string(c.Canonical) != tt.canonical {
				t.Errorf("Canonical = %s, want %s", c.Canonical, tt.canonical)
			}
			if len(c.ArgsHash) != 32 {
				t.Errorf("ArgsHash = %q", c.ArgsHash)
			}
			if c.Tool.Name != tt.tool || c.Vars.Tool != tt.tool || c.Vars.RunID != "r1" || c.Vars.CallID != "c1" || c.Vars.Principal != alice {
				t.Errorf("Checked does not describe the call: %+v %+v", c.Tool.Name, c.Vars)
			}
		})
	}
}

// TestCheckBigIntegers checks 2^53+1 survives validation, rules and the
// idempotency key without float64 rounding.
func TestCheckBigIntegers(t *testing.T) {
	v := setup(t)
	big := &types.Principal{ID: "cust_42", Permissions: []string{"refunds:write"},
		Limits: map[string]json.Number{"max_refund_paise": "9007199254740993"}}
	c, r := v.Check(&Input{Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-1","amount_paise":9007199254740993}`), Principal: big, RunID: "r1"})
	if r == nil {
		t.Fatalf("accepted %s; want the approval rule (amount > 450000)", c.Canonical)
	}
	if r.Code != types.CodeApprovalRequired {
		t.Fatalf("code = %s (%s); want approval_required: 9007199254740993 is not above the limit 9007199254740993", r.Code, r.Message)
	}
	if !strings.Contains(r.Message, "9007199254740993 paise") {
		t.Errorf("message lost the exact amount: %s", r.Message)
	}
	r2 := mustRefuse(t, v, &Input{Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-1","amount_paise":9007199254740994}`), Principal: big})
	if r2.Code != "over_limit" || !strings.Contains(r2.Message, "Refund of 9007199254740994 paise exceeds the 9007199254740993 paise limit") {
		t.Errorf("got %s: %s", r2.Code, r2.Message)
	}

	c, r = v.Check(&Input{Tool: "ship_order", Args: json.RawMessage(`{"order_id":"O1","address":{"city":"Pune","zip":"411001"},"items":[{}],"count":9007199254740993}`)})
	if r != nil {
		t.Fatalf("refused: %s", r.Message)
	}
	if got := c.Args["count"]; got != json.Number("9007199254740993") {
		t.Errorf("Args[count] = %#v", got)
	}
	vars := *c.Vars
	vars.Args = map[string]any{"order_id": "ORD-1", "amount_paise": c.Args["count"]}
	vars.RunID = "r1"
	key, err := v.tools["issue_refund"].KeyTemplate.Render(&vars)
	if err != nil || key != "refund:ORD-1:9007199254740993:r1" {
		t.Errorf("key = %q, %v", key, err)
	}
}

// TestRuleDefaultMessages covers rules configured in Go without a message.
func TestRuleDefaultMessages(t *testing.T) {
	cfg := refundConfig(t)
	rules := cfg.Tools["issue_refund"].Rules
	rules[1].Message, rules[2].Message = "", ""
	v, err := Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, state string
		code              types.Code
		contains          []string
	}{
		{"deny", `{"order_id":"ORD-1","amount_paise":5,"reason":"goodwill"}`, `{"goodwill_refunds":1}`, CodeRuleDenied,
			[]string{"This issue_refund call is refused by rule rules[2] (has(args.reason)", "Do not retry with the same arguments"}},
		{"approval", `{"order_id":"ORD-1","amount_paise":480000}`, `{}`, types.CodeApprovalRequired,
			[]string{"needs a person's approval (rule rules[1]: args.amount_paise > 450000)", "wait for the decision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRefuse(t, v, &Input{Tool: "issue_refund", Args: json.RawMessage(tt.args), Principal: alice, State: json.RawMessage(tt.state)})
			if r.Code != tt.code {
				t.Errorf("code = %s, want %s", r.Code, tt.code)
			}
			for _, c := range tt.contains {
				if !strings.Contains(r.Message, c) {
					t.Errorf("message lacks %q: %s", c, r.Message)
				}
			}
		})
	}
}

func mustRefuse(t *testing.T, v *Validator, in *Input) *Refusal {
	t.Helper()
	c, r := v.Check(in)
	if r == nil {
		t.Fatalf("accepted %s", c.Canonical)
	}
	return r
}

func TestRefusalNext(t *testing.T) {
	tests := []struct {
		r    Refusal
		want types.Next
	}{
		{Refusal{Code: types.CodeUnknownTool}, types.NextFixArgs},
		{Refusal{Code: types.CodeMissingArguments}, types.NextFixArgs},
		{Refusal{Code: types.CodeInvalidArgument}, types.NextFixArgs},
		{Refusal{Code: types.CodeForbidden}, types.NextEscalate},
		{Refusal{Code: types.CodeNotOwner}, types.NextEscalate},
		{Refusal{Code: "over_limit"}, types.NextEscalate},
		{Refusal{Code: types.CodeApprovalRequired, Approval: true}, types.NextWait},
	}
	for _, tt := range tests {
		if got := tt.r.Next(); got != tt.want {
			t.Errorf("%s.Next() = %s, want %s", tt.r.Code, got, tt.want)
		}
		if e := tt.r.Err(); e.Code != tt.r.Code || e.Retryable {
			t.Errorf("%s.Err() = %+v", tt.r.Code, e)
		}
	}
}

// BenchmarkCheck is the hot path: a valid call that passes the schema, the
// permission and three rules.
func BenchmarkCheck(b *testing.B) {
	v := setup(b)
	in := &Input{
		Tool:      "issue_refund",
		Args:      json.RawMessage(`{"order_id":"ORD-4471","amount_paise":425000,"reason":"late"}`),
		Principal: alice,
		State:     json.RawMessage(`{"refunded_paise":1000}`),
		RunID:     "r1",
		CallID:    "toolu_1",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, r := v.Check(in); r != nil {
			b.Fatal(r.Message)
		}
	}
}

// BenchmarkCheckRefusal measures a typical refusal (a type error).
func BenchmarkCheckRefusal(b *testing.B) {
	v := setup(b)
	in := &Input{Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-4471","amount_paise":"425000"}`), Principal: alice}
	b.ReportAllocs()
	for b.Loop() {
		if _, r := v.Check(in); r == nil {
			b.Fatal("accepted")
		}
	}
}

// TestCheckConcurrent runs Check from many goroutines on one Validator; run
// it with -race.
func TestCheckConcurrent(t *testing.T) {
	v := setup(t)
	calls := []struct {
		args string
		code types.Code
	}{
		{`{"order_id":"ORD-4471","amount_paise":425000}`, ""},
		{`{"order_id":"4471","amount_paise":5}`, types.CodeInvalidArgument},
		{`{"order_id":"ORD-1","amount_paise":600000}`, "over_limit"},
		{`{"order_id":"ORD-1","amount_paise":"5"}`, types.CodeWrongType},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				call := calls[(g+i)%len(calls)]
				_, r := v.Check(&Input{Tool: "issue_refund", Args: json.RawMessage(call.args), Principal: alice})
				var got types.Code
				if r != nil {
					got = r.Code
				}
				if got != call.code {
					t.Errorf("%s: code %q, want %q", call.args, got, call.code)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestMessagesStayShort checks a model cannot flood a refusal message with
// a huge tool name or hundreds of long argument names.
func TestMessagesStayShort(t *testing.T) {
	v := setup(t)
	long := strings.Repeat("x", 10000)
	var extras strings.Builder
	extras.WriteString(`{"order_id":"ORD-1","amount_paise":5`)
	for i := range 300 {
		fmt.Fprintf(&extras, `,"%s%d":1`, long[:500], i)
	}
	extras.WriteString("}")
	tests := []struct {
		name, tool, args string
		code             types.Code
	}{
		{"huge tool name", long, `{}`, types.CodeUnknownTool},
		{"many long extras", "issue_refund", extras.String(), types.CodeUnknownArguments},
		{"long value", "issue_refund", `{"order_id":"` + long + `","amount_paise":5}`, types.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRefuse(t, v, &Input{Tool: tt.tool, Args: json.RawMessage(tt.args), Principal: alice})
			if r.Code != tt.code {
				t.Fatalf("code = %s, want %s", r.Code, tt.code)
			}
			if len(r.Message) > 4000 {
				t.Errorf("message is %d bytes: %.200s…", len(r.Message), r.Message)
			}
		})
	}
}

// TestCheckRootSchemaKeywords covers schema keywords that judge the
// arguments as a whole rather than one argument.
func TestCheckRootSchemaKeywords(t *testing.T) {
	cfg := refundConfig(t)
	cfg.Tools["pay"] = &config.Tool{
		Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil },
		InputSchema: obj(t, `{"type":"object",
			"properties":{"card":{"type":"string"},"cvv":{"type":"string"},"upi":{"type":"string"},"amount":{"type":"integer"}},
			"dependentRequired":{"card":["cvv"]},
			"oneOf":[{"required":["card"]},{"required":["upi"]}],
			"minProperties":2,
			"additionalProperties":false}`),
	}
	v, err := Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		code       types.Code
		contains   string
	}{
		{"dependent required", `{"card":"4111","amount":5}`, types.CodeMissingArguments,
			"The arguments of pay are missing the required argument cvv that goes with card."},
		{"one of none", `{"amount":5,"cvv":"1"}`, types.CodeInvalidArgument,
			"The arguments of pay are invalid: {\"amount\":5,\"cvv\":\"1\"} matches none of the allowed forms (oneOf)."},
		{"one of both", `{"card":"4111","cvv":"1","upi":"a@b"}`, types.CodeInvalidArgument,
			"matches more than one of the allowed forms (oneOf, forms 0 and 1)"},
		{"min properties", `{"upi":"a@b"}`, types.CodeInvalidArgument,
			"it has 1 field, fewer than the minimum 2 (minProperties)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRefuse(t, v, &Input{Tool: "pay", Args: json.RawMessage(tt.args)})
			if r.Code != tt.code || r.Field != "args" || !strings.Contains(r.Message, tt.contains) {
				t.Errorf("got %s [%s] %s\nwant %s [args] …%s…", r.Code, r.Field, r.Message, tt.code, tt.contains)
			}
		})
	}
	if c, r := v.Check(&Input{Tool: "pay", Args: json.RawMessage(`{"upi":"a@b","amount":5}`)}); r != nil {
		t.Errorf("refused a valid call: %s", r.Message)
	} else if string(c.Canonical) != `{"amount":5,"upi":"a@b"}` {
		t.Errorf("Canonical = %s", c.Canonical)
	}
}
