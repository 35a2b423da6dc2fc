package validate

import (
	"fmt"
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
