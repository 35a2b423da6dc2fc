package validate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// compileOne compiles a config of the one tool, named t.
func compileOne(tb testing.TB, tool *config.Tool) *Validator {
	tb.Helper()
	cfg := &config.Config{Tools: map[string]*config.Tool{"t": tool}}
	if err := cfg.Normalize(); err != nil {
		tb.Fatal(err)
	}
	v, err := Compile(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// A write's quota uses are computed by Check, with whether each key names
// the run (scoped to the run's owner by the pipeline); a quota whose amount
// cannot be evaluated refuses the call, with the checked call.
func TestCheckQuotaUses(t *testing.T) {
	fn := func(ctx context.Context, args json.RawMessage) (any, error) { return nil, nil }
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	week := config.Duration(7 * 24 * 3600e9)
	tool := &config.Tool{Description: "t", InputSchema: schema, Func: fn, Effect: types.EffectWrite, Quotas: []config.Quota{
		{Name: "per_principal", Key: "{principal.id}", Amount: "args.n", Limit: 10, Window: week},
		{Name: "per_run", Key: "{run_id}", Limit: 3, Window: week},
		{Name: "per_call", Key: "{call_id}:{principal.id}", Limit: 3, Window: week},
	}}
	v := compileOne(t, tool)
	p := &types.Principal{ID: "cust_42"}
	c, r := v.Check(&Input{Tool: "t", Args: json.RawMessage(`{"n": 4}`), Principal: p, RunID: "r1", CallID: "c1"})
	if r != nil {
		t.Fatal(r.Message)
	}
	want := []struct {
		key      string
		amount   int64
		runLocal bool
	}{{"cust_42", 4, false}, {"r1", 1, true}, {"c1:cust_42", 1, true}}
	if len(c.Quotas) != len(want) {
		t.Fatalf("Quotas = %+v", c.Quotas)
	}
	for i, w := range want {
		u := c.Quotas[i]
		if u.Key != w.key || u.Amount != w.amount || u.Quota.RunLocal != w.runLocal {
			t.Errorf("Quotas[%d] = %s %d run-local %v; want %s %d %v", i, u.Key, u.Amount, u.Quota.RunLocal, w.key, w.amount, w.runLocal)
		}
	}
	c, r = v.Check(&Input{Tool: "t", Args: json.RawMessage(`{}`), Principal: p, RunID: "r1", CallID: "c1"})
	if r == nil || r.Code != CodeRuleError || c == nil || c.Quotas != nil {
		t.Fatalf("an amount that cannot be evaluated: checked %v, refusal %+v; want rule_error with the checked call", c != nil, r)
	}
}

// A call refused by a rule is refused by that rule, even when its quota
// uses cannot be evaluated either (they are prepared before the rules are
// judged); one the rules pass carries them.
func TestRuleRefusalBeforeQuotaUses(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}, "m": map[string]any{"type": "integer"}}}
	tool := &config.Tool{Description: "t", InputSchema: schema, Effect: types.EffectWrite,
		Func:   func(ctx context.Context, args json.RawMessage) (any, error) { return nil, nil },
		Rules:  []config.Rule{{Deny: "!has(args.m)", Code: "needs_m", Message: "Give m."}},
		Quotas: []config.Quota{{Name: "q", Key: "{principal.id}", Amount: "args.n", Limit: 10, Window: config.Duration(3600e9)}}}
	v := compileOne(t, tool)
	p := &types.Principal{ID: "cust_42"}
	for _, tt := range []struct {
		args   string
		code   types.Code
		quotas int
	}{
		{`{}`, "needs_m", 0},           // the rule refuses; the amount cannot be evaluated either
		{`{"n": 2}`, "needs_m", 1},     // the rule refuses; the uses are prepared all the same
		{`{"m": 1}`, CodeRuleError, 0}, // the rule passes; the amount cannot be evaluated
		{`{"n": 2, "m": 1}`, "", 1},    // both pass
	} {
		c, r := v.Check(&Input{Tool: "t", Args: json.RawMessage(tt.args), Principal: p, RunID: "r1", CallID: "c1"})
		var code types.Code
		if r != nil {
			code = r.Code
		}
		if code != tt.code || c == nil || len(c.Quotas) != tt.quotas {
			t.Errorf("%s: refusal %+v, checked %v; want %q with %d quota uses", tt.args, r, c, tt.code, tt.quotas)
		}
	}
}
