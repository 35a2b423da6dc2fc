package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// What Check hands on to the later stages of a call that passed the rules
// (prepare): the ownership lookup and a write's quota uses, and, when the
// pipeline needs it, the verify read; and the verdicts on what those reads
// bring back (OwnerVerdict, Verified).

// Lookup is a read the pipeline makes for a checked call: the ownership
// check's (Checked.Owner) or the verify read's (Validator.VerifyLookup).
type Lookup struct {
	// Tool is the read tool.
	Tool *Compiled
	// Args are its arguments, evaluated over the call (numbers as
	// json.Number, as a model's arguments are).
	Args map[string]any
}

// prepare computes what the later stages need of a call that passed the
// rules: its ownership lookup and, for a write, its quota uses. Either
// failing refuses the call, with the checked call (fail closed).
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

// VerifyLookup is the verify read of c, a call of a tool with a verify
// block: its tool and its arguments, evaluated over the call.
func (v *Validator) VerifyLookup(c *Checked) (*Lookup, error) {
	if c.Tool.Spec.Verify == nil {
		return nil, fmt.Errorf("%s has no verify read", c.Tool.Name)
	}
	return v.lookup(c, c.Tool.Spec.Verify.Lookup, c.Tool.VerifyArgs)
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

// OwnerVerdict judges the answer of c's ownership lookup: nil when the
// principal owns the object, not_owner when found is false (the lookup
// said there is no such object for us to see) or owner.expect does not
// hold of data (fail closed: an answer it cannot be evaluated on too).
func (c *Checked) OwnerVerdict(data json.RawMessage, found bool) *Refusal {
	if found && c.Tool.OwnerExpect != nil {
		if ok, err := judge(c, c.Tool.OwnerExpect, data, "owner.expect"); err == nil && ok {
			return nil
		}
	}
	return c.notOwner()
}

// Verified judges the answer of c's verify read: found when verify.found
// holds of data. answer is what the verified call answers with: the pick
// of verify.result (canonical JSON) when the tool has one and it can be
// evaluated, data otherwise.
func (c *Checked) Verified(data json.RawMessage) (found bool, answer json.RawMessage, err error) {
	if c.Tool.VerifyFound == nil {
		return false, nil, fmt.Errorf("%s has no verify check", c.Tool.Name)
	}
	vars, err := withResult(c, data, "verify.found")
	if err != nil {
		return false, nil, err
	}
	found, err = c.Tool.VerifyFound.EvalBool(vars)
	if err != nil {
		return false, nil, fmt.Errorf("verify.found (%s): %w", c.Tool.VerifyFound.Source(), err)
	}
	if !found {
		return false, data, nil
	}
	if pick := c.Tool.VerifyResult; pick != nil {
		if picked, err := pick.Eval(vars); err == nil {
			return true, jsontext.Canonical(picked), nil
		}
	}
	return true, data, nil
}

func judge(c *Checked, p *expr.Program, data json.RawMessage, key string) (bool, error) {
	vars, err := withResult(c, data, key)
	if err != nil {
		return false, err
	}
	ok, err := p.EvalBool(vars)
	if err != nil {
		return false, fmt.Errorf("%s (%s): %w", key, p.Source(), err)
	}
	return ok, nil
}

// withResult is a copy of c's vars with result bound to a lookup's data.
func withResult(c *Checked, data json.RawMessage, key string) (*expr.Vars, error) {
	vars := *c.Vars
	vars.Result = nil
	if len(data) > 0 {
		d, err := jsontext.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: lookup data: %w", key, err)
		}
		vars.Result = d
	}
	return &vars, nil
}

// notOwner is the refusal when the ownership lookup says the object is not
// the principal's. It names the object's id arguments and their values.
func (c *Checked) notOwner() *Refusal {
	var ids []string
	for _, name := range c.Tool.ownerIDArgs {
		if val, ok := c.Args[name]; ok {
			ids = append(ids, fmt.Sprintf("%s %s", name, brief(val)))
		}
	}
	object := "The object this call refers to"
	if len(ids) > 0 {
		object = "The object with " + strings.Join(ids, " and ")
	}
	who := "this run's principal"
	if p := c.Vars.Principal; p != nil && p.ID != "" {
		who = "principal " + p.ID
	}
	lookup := ""
	if o := c.Tool.Spec.Owner; o != nil {
		lookup = fmt.Sprintf(" (checked with %s)", o.Lookup)
	}
	r := &Refusal{
		Code: types.CodeNotOwner,
		Message: fmt.Sprintf("%s does not belong to %s%s. Do not retry with the same id: ask the user for the right one, or escalate to a person.",
			object, who, lookup),
		Rule: -1,
	}
	if len(c.Tool.ownerIDArgs) > 0 {
		r.Field = c.Tool.ownerIDArgs[0]
	}
	return r
}
