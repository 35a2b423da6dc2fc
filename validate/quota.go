package validate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
)

// Quota is one compiled quota of a tool.
type Quota struct {
	// Name, Limit and Window are the configured quota's.
	Name   string
	Limit  int64
	Window time.Duration
	// Key renders whose quota a call uses.
	Key *expr.Template
	// RunLocal says Key names the run or the call, ids that each bearer
	// key chooses for itself (see types.ScopedRunID), rather than a
	// principal or an argument shared by design: the pipeline scopes such
	// a key to the run's owner.
	RunLocal bool
	// Amount computes what a call uses; nil means 1.
	Amount *expr.Program
	// Message, when set, is the configured refusal text.
	Message *expr.Template
}

// QuotaUse is what one call would use of one quota.
type QuotaUse struct {
	Quota  *Quota
	Key    string
	Amount int64
}

// compileQuotas compiles a tool's quotas (config.Normalize has checked
// names, limits and windows).
func compileQuotas(env *expr.Env, qs []config.Quota, bad func(key, format string, a ...any)) []*Quota {
	var out []*Quota
	for i, q := range qs {
		key := fmt.Sprintf("quotas[%d]", i)
		c := &Quota{Name: q.Name, Limit: q.Limit, Window: q.Window.D()}
		src := q.Key
		if src == "" {
			src = config.DefaultQuotaKey
		}
		t, err := expr.ParseTemplate(src)
		if err != nil {
			bad(key+".key", "%v", err)
			continue
		}
		if !t.Separated() {
			bad(key+".key", "%q puts two placeholders side by side; separate them (such as {principal.id}:{args.order_id}) so that two different calls cannot make the same key", src)
			continue
		}
		c.Key = t
		for _, p := range t.Placeholders() {
			c.RunLocal = c.RunLocal || p == "run_id" || p == "call_id"
		}
		if q.Amount != "" {
			p, err := env.CompileInt(q.Amount)
			if err != nil {
				bad(key+".amount", "%v", err)
				continue
			}
			c.Amount = p
		}
		if q.Message != "" {
			m, err := expr.ParseTemplate(q.Message)
			if err != nil {
				bad(key+".message", "%v", err)
				continue
			}
			c.Message = m
		}
		out = append(out, c)
	}
	return out
}

// quotaUses computes what a checked call would use of each of its tool's
// quotas: the rendered key and the amount. An amount that is not a
// non-negative integer, or a key with a missing value, is an error (the
// call is then refused: quotas fail closed).
func (c *Checked) quotaUses() ([]QuotaUse, error) {
	if len(c.Tool.Quotas) == 0 {
		return nil, nil
	}
	out := make([]QuotaUse, 0, len(c.Tool.Quotas))
	for _, q := range c.Tool.Quotas {
		key, err := q.Key.RenderEscaped(c.Vars)
		if err != nil {
			return nil, fmt.Errorf("quota %s: key %s: %w", q.Name, q.Key, err)
		}
		amount := int64(1)
		if q.Amount != nil {
			v, err := q.Amount.Eval(c.Vars)
			if err != nil {
				return nil, fmt.Errorf("quota %s: amount %s: %w", q.Name, q.Amount.Source(), err)
			}
			n, ok := v.(json.Number)
			if !ok {
				return nil, fmt.Errorf("quota %s: amount %s is %v, not an integer", q.Name, q.Amount.Source(), v)
			}
			if amount, err = strconv.ParseInt(string(n), 10, 64); err != nil || amount < 0 {
				return nil, fmt.Errorf("quota %s: amount %s is %s, not a non-negative integer", q.Name, q.Amount.Source(), n)
			}
		}
		out = append(out, QuotaUse{Quota: q, Key: key, Amount: amount})
	}
	return out, nil
}
