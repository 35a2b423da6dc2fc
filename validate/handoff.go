package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// What Check hands on to the later stages of a checked call (prepare): the
// arguments of its ownership lookup and a write's quota
// uses. The reads themselves, and the verdicts on their answers, are in
// reads.go.

// Lookup is a read made for a checked call: its ownership lookup
// (Checked.Owner) or its verify read.
type Lookup struct {
	// Tool is the read tool.
	Tool *Compiled
	// Args are its arguments, evaluated over the call (numbers as
	// json.Number, as a model's arguments are).
	Args map[string]any
}

// prepare computes what the later stages need of a checked call: its
// ownership lookup and, for a write, its quota uses. Either failing
// refuses the call, with the checked call (fail closed), when the rules
// pass it.
func (v *Validator) prepare(c *Checked) *Refusal {
	if owner := c.Tool.Spec.Owner; owner != nil {
		l, err := v.lookup(c, owner.Lookup, c.Tool.OwnerArgs)
		if err != nil {
			return &Refusal{Code: types.CodeInternalError, Message: "the ownership check could not be prepared (" + err.Error() + "); escalate.", Rule: -1}
		}
		c.Owner = l
	}
	if c.Tool.Spec.Effect == types.EffectWrite {
		uses, err := c.quotaUses()
		if err != nil {
			return &Refusal{Code: CodeRuleError, Rule: -1,
				Message: fmt.Sprintf("A quota of %s could not be evaluated (%v), so the call is refused to be safe. Do not retry; escalate.", c.Tool.Name, err)}
		}
		c.Quotas = uses
	}
	return nil
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

// lookup evaluates a lookup's argument expressions (c.Tool.OwnerArgs or
// c.Tool.VerifyArgs) over the checked call. The values go through their
// canonical JSON, so that the read tool is called with arguments of the
// same types as a model's. No expressions give {}.
func (v *Validator) lookup(c *Checked, tool string, progs map[string]*expr.Program) (*Lookup, error) {
	read, ok := v.tools[tool]
	if !ok {
		return nil, fmt.Errorf("lookup tool %q is not configured", tool)
	}
	out := make(map[string]any, len(progs))
	for _, name := range slices.Sorted(maps.Keys(progs)) {
		val, err := progs[name].Eval(c.Vars)
		if err != nil {
			return nil, fmt.Errorf("lookup argument %s (%s): %w", name, progs[name].Source(), err)
		}
		out[name] = val
	}
	args, err := jsontext.DecodeObject(jsontext.Canonical(out))
	if err != nil {
		return nil, fmt.Errorf("lookup arguments: %w", err)
	}
	return &Lookup{Tool: read, Args: args}, nil
}
