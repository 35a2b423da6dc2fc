package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// LookupArgs evaluates a lookup's argument expressions (c.Tool.OwnerArgs or
// c.Tool.VerifyArgs) over the checked call and returns them as a canonical
// JSON object, ready to call the lookup tool with. No expressions give {}.
func (v *Validator) LookupArgs(progs map[string]*expr.Program, c *Checked) (json.RawMessage, error) {
	out := make(map[string]any, len(progs))
	for _, name := range slices.Sorted(maps.Keys(progs)) {
		val, err := progs[name].Eval(c.Vars)
		if err != nil {
			return nil, fmt.Errorf("lookup argument %s (%s): %w", name, progs[name].Source(), err)
		}
		out[name] = val
	}
	return jsontext.Canonical(out), nil
}

// OwnerAccepts evaluates the tool's owner.expect with result bound to the
// lookup's data: true when the principal owns the object.
func (v *Validator) OwnerAccepts(c *Checked, lookupData json.RawMessage) (bool, error) {
	if c.Tool.OwnerExpect == nil {
		return false, fmt.Errorf("%s has no owner check", c.Tool.Name)
	}
	return judge(c, c.Tool.OwnerExpect, lookupData, "owner.expect")
}

// VerifyFinds evaluates the tool's verify.found with result bound to the
// verify read's data: true when the write is seen to have happened.
func (v *Validator) VerifyFinds(c *Checked, lookupData json.RawMessage) (bool, error) {
	if c.Tool.VerifyFound == nil {
		return false, fmt.Errorf("%s has no verify check", c.Tool.Name)
	}
	return judge(c, c.Tool.VerifyFound, lookupData, "verify.found")
}

func judge(c *Checked, p *expr.Program, data json.RawMessage, key string) (bool, error) {
	var result any
	if len(data) > 0 {
		d, err := jsontext.Decode(data)
		if err != nil {
			return false, fmt.Errorf("%s: lookup data: %w", key, err)
		}
		result = d
	}
	vars := *c.Vars
	vars.Result = result
	ok, err := p.EvalBool(&vars)
	if err != nil {
		return false, fmt.Errorf("%s (%s): %w", key, p.Source(), err)
	}
	return ok, nil
}

// NotOwner is the refusal when the ownership lookup says the object is not
// the principal's. It names the object's id arguments and their values.
func NotOwner(c *Checked) *Refusal {
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
