package validate

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// badConfig is testdata/bad/toolgate.yaml built in Go: one config with
// many problems, each of which Compile must report.
func badConfig(t testing.TB) *config.Config {
	return &config.Config{
		Dependencies: map[string]*config.Dependency{"payments": {Name: "payments", BaseURL: "http://x"}},
		Tools: map[string]*config.Tool{
			"get_order": {
				Dependency: "payments",
				Request:    &config.Request{Method: "GET", Path: "/orders/{order_id}"},
				Effect:     types.EffectRead,
				InputSchema: obj(t, `{"type":"object","required":["order_id"],
					"properties":{"order_id":{"type":"string"}},"additionalProperties":false}`),
			},
			"cancel_order": {
				Dependency:  "payments",
				Request:     &config.Request{Method: "POST", Path: "/orders/{order_id}/cancel"},
				InputSchema: obj(t, `{"type":"object","properties":{"order_id":{"type":"string"}}}`),
			},
			"issue_refund": {
				Dependency: "paymnts",
				Request:    &config.Request{Method: "POST", Path: "/refunds/{refund_ref}"},
				InputSchema: obj(t, `{"type":"object","required":["order_id","amount_paise","amount_rupees"],
					"properties":{"order_id":{"type":"string"},"amount_paise":{"type":"integer"},"note":{"type":"string"}},
					"additionalProperties":false}`),
				Rules: []config.Rule{
					{Deny: "arg.amount_paise > 5", Message: "over by {amt}"},
					{Deny: "args.amount_paise + 1", Message: "{state.used}"},
					{Deny: "true", Code: "Over Limit"},
					{Deny: "true", Code: "upstream_error"},
					{Deny: " "},
				},
				Idempotency: config.Idempotency{Key: "refund:{order}:{run_id}"},
				Owner: &config.Lookup{
					Lookup: "get_ordr",
					Args:   map[string]string{"order_id": "args.order_id +"},
					Found:  "true",
				},
				Verify: &config.Lookup{
					Lookup: "cancel_order",
					Args:   map[string]string{"order_id": "args.order_id"},
					Found:  "result.refunds.size()",
				},
				State: map[string]string{"refund_id": "result.refund_id ++", "total": "state.total + args.amount_paise"},
			},
			"notify": {
				InputSchema: obj(t, `{"type":"object","properties":{"to":{"type":"strin"}}}`),
				Owner:       &config.Lookup{Args: map[string]string{"foo": "args.to"}},
				Verify: &config.Lookup{
					Lookup: "get_order",
					Args:   map[string]string{"id": "args.to"},
				},
				Idempotency: config.Idempotency{Key: "notify:{to"},
			},
			"list_all": {
				Func:        func(context.Context, json.RawMessage) (any, error) { return nil, nil },
				InputSchema: obj(t, `{"type":"array"}`),
			},
			"remote_ref": {
				Func:        func(context.Context, json.RawMessage) (any, error) { return nil, nil },
				InputSchema: obj(t, `{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"}}}`),
			},
			"bad name!": {
				Func: func(context.Context, json.RawMessage) (any, error) { return nil, nil },
			},
			"nothing": nil,
			"self_lookup": {
				Func:   func(context.Context, json.RawMessage) (any, error) { return nil, nil },
				Effect: types.EffectRead,
				Owner:  &config.Lookup{Lookup: "self_lookup", Expect: "true"},
			},
		},
	}
}

func TestCompileReportsEveryProblem(t *testing.T) {
	_, err := Compile(badConfig(t), nil)
	if err == nil {
		t.Fatal("Compile accepted a bad config")
	}
	var problems []*Problem
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var p *Problem
		if !errors.As(e, &p) {
			t.Fatalf("%T is not a *Problem: %v", e, e)
		}
		problems = append(problems, p)
	}
	want := []struct{ tool, key, why string }{
		{"bad name!", "", "letters, digits, _ and -"},
		{"issue_refund", "input_schema.required", `"amount_rupees" is required but is not among the properties`},
		{"issue_refund", "dependency", `names "paymnts", which is not declared under dependencies (declared: payments)`},
		{"issue_refund", "request.path", "placeholder {refund_ref} is not an argument of the tool (arguments: amount_paise, note, order_id)"},
		{"issue_refund", "rules[0].deny", "undeclared reference to 'arg'"},
		{"issue_refund", "rules[0].message", "placeholder {amt} is not an argument"},
		{"issue_refund", "rules[1].deny", "yields int, want a bool"},
		{"issue_refund", "rules[1].message", "unknown placeholder {state.used}"},
		{"issue_refund", "rules[2].code", `"Over Limit" is not a code`},
		{"issue_refund", "rules[3].code", `"upstream_error" is a built-in code`},
		{"issue_refund", "rules[4].deny", "is empty"},
		{"issue_refund", "idempotency.key", "placeholder {order} is not an argument"},
		{"issue_refund", "state.refund_id", "Syntax error"},
		{"issue_refund", "owner.lookup", `names "get_ordr", which is not a tool. Did you mean get_order?`},
		{"issue_refund", "owner.args.order_id", "Syntax error"},
		{"issue_refund", "owner.found", "is not used by owner; write the condition as expect"},
		{"issue_refund", "owner.expect", "is empty"},
		{"issue_refund", "verify.lookup", "names cancel_order, whose effect is write; a lookup must be a tool with effect: read"},
		{"issue_refund", "verify.found", "yields int, want a bool"},
		{"notify", "input_schema", "is not a valid JSON Schema: at /properties/to/type"},
		{"notify", "dependency", "an HTTP tool needs a dependency"},
		{"notify", "request", "an HTTP tool needs request"},
		{"notify", "idempotency.key", "unclosed {"},
		{"notify", "owner.lookup", "is empty"},
		{"notify", "owner.expect", "is empty"},
		{"notify", "verify.args.id", "get_order has no argument id (its arguments: order_id)"},
		{"notify", "verify.args", "get_order requires argument order_id, which is not given here"},
		{"notify", "verify.found", "is empty"},
		{"cancel_order", "request.path", "placeholder {order_id} names an optional argument"},
		{"list_all", "input_schema.type", "is array; the arguments are always a JSON object"},
		{"remote_ref", "input_schema", "external references are not allowed"},
		{"nothing", "", "is empty"},
		{"self_lookup", "owner.lookup", "names the tool itself"},
	}
	for _, w := range want {
		found := slices.ContainsFunc(problems, func(p *Problem) bool {
			return p.Tool == w.tool && p.Key == w.key && strings.Contains(p.Why, w.why)
		})
		if !found {
			t.Errorf("no problem tools.%s.%s: ...%s...", w.tool, w.key, w.why)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(problems), len(want), err)
	}
	// The joined error has one problem per line, each fully located.
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(problems) {
		t.Errorf("error has %d lines for %d problems", len(lines), len(problems))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "tools.") {
			t.Errorf("line not located: %q", l)
		}
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{"issue_refund", "rules[0].deny", "undeclared reference to 'arg'"}, "tools.issue_refund.rules[0].deny: undeclared reference to 'arg'"},
		{Problem{"nothing", "", "is empty"}, "tools.nothing: is empty"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestCompileGood(t *testing.T) {
	v := setup(t)
	if got, want := v.Names(), []string{"get_order", "issue_refund", "list_refunds", "ping", "ship_order"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	c, ok := v.Tool("issue_refund")
	if !ok {
		t.Fatal("issue_refund missing")
	}
	if c.KeyTemplate == nil || c.KeyTemplate.String() != "refund:{order_id}:{amount_paise}:{run_id}" {
		t.Errorf("KeyTemplate = %v", c.KeyTemplate)
	}
	if len(c.StateExprs) != 2 || c.OwnerExpect == nil || c.VerifyFound == nil || len(c.OwnerArgs) != 1 || len(c.VerifyArgs) != 1 {
		t.Errorf("compiled parts missing: %+v", c)
	}
	if len(c.Rules) != 3 || c.Rules[0].Code != "over_limit" || c.Rules[1].Code != types.CodeApprovalRequired || !c.Rules[1].Approval || c.Rules[2].Code != CodeRuleDenied {
		t.Errorf("rules = %+v %+v %+v", c.Rules[0], c.Rules[1], c.Rules[2])
	}
	if !slices.Equal(c.Required, []string{"order_id", "amount_paise"}) || !slices.Equal(c.Properties, []string{"amount_paise", "order_id", "reason"}) {
		t.Errorf("Required %v Properties %v", c.Required, c.Properties)
	}
	if g, _ := v.Tool("get_order"); !slices.Equal(g.PathParams, []string{"order_id"}) || g.OwnerArgs != nil || g.KeyTemplate != nil {
		t.Errorf("get_order = %+v", g)
	}
	if p, _ := v.Tool("ping"); p.Effect != types.EffectWrite {
		t.Errorf("ping effect = %s, want the write default", p.Effect)
	}
	if _, ok := v.Tool("nope"); ok {
		t.Error("Tool(nope) found")
	}
	if v.Env() == nil {
		t.Error("Env() is nil")
	}
}

func TestCompileNilConfig(t *testing.T) {
	if _, err := Compile(nil, nil); err == nil {
		t.Error("Compile(nil) succeeded")
	}
}

func BenchmarkCompile(b *testing.B) {
	cfg := refundConfig(b)
	for b.Loop() {
		if _, err := Compile(cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}
