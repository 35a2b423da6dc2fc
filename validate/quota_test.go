package validate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

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
	cfg := &config.Config{Tools: map[string]*config.Tool{"t": tool}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	v, err := Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
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
