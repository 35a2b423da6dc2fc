package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/types"
)

// Input is one call to judge.
type Input struct {
	// Tool is the name the model asked for.
	Tool string
	// Args is the JSON object of arguments. Empty or null means no
	// arguments ({}).
	Args json.RawMessage
	// Principal is who the run acts for; nil holds no permissions.
	Principal *types.Principal
	// State is the run's state as stored, a JSON object (empty or null is
	// the empty state). Check decodes it only for a tool with expressions,
	// the only ones that can see it, and hands it on in Checked.Vars.
	State json.RawMessage
	// RunID and CallID identify the call.
	RunID, CallID string
	// SkipApprovalRules passes over rules with `approval: true`: a person
	// has approved this exact action. Flat deny rules still apply.
	SkipApprovalRules bool
	// Key is the name of the API key that owns the run ("" for none): a
	// tool outside its catalogue is unknown_tool, as if it did not exist.
	Key string
}

// Checked is a call that passed every pure check.
type Checked struct {
	// Tool is the compiled tool.
	Tool *Compiled
	// Args are the decoded arguments (numbers as json.Number).
	Args map[string]any
	// Canonical is jsontext.Canonical(Args).
	Canonical []byte
	// ArgsHash is jsontext.Hash(Canonical).
	ArgsHash string
	// Vars are ready for the later expressions (Result is nil).
	Vars *expr.Vars
	// Owner is the ownership lookup the pipeline makes (its tool and
	// arguments), nil for a tool without owner:, or when it could not be
	// prepared (the call is then refused).
	Owner *Lookup
	// Quotas are what a write uses of each of its tool's quotas (key and
	// amount), in config order; nil for a read, or when they could not be
	// evaluated (the call is then refused).
	Quotas []QuotaUse
}

// checkedVars holds a Checked and the Vars it points to, allocated once.
type checkedVars struct {
	checked Checked
	vars    expr.Vars
}

// Refusal says why a call was refused, in words the model can act on.
type Refusal struct {
	// Code is unknown_tool, wrong_type, missing_arguments,
	// unknown_arguments, invalid_argument, forbidden, not_owner,
	// approval_required, rule_error, or a rule's own code.
	Code types.Code
	// Message is the instructive text for the model.
	Message string
	// Rule is the index of the deciding rule, -1 when no rule decided.
	Rule int
	// Approval is true when the deciding rule asks for a person's approval
	// instead of refusing outright.
	Approval bool
	// RuleNext is the advice of a rule refusal, the rule's next: (see
	// Next); empty for every other refusal, whose advice follows from its
	// code.
	RuleNext types.Next
	// Field is the argument concerned (the first one, when several are),
	// as a path: order_id, address.city, items[0].sku. "args" means the
	// arguments as a whole.
	Field string
}

// Err returns the refusal as the envelope's error.
func (r *Refusal) Err() *types.Error { return types.NewError(r.Code, r.Message) }

// Next is the machine-readable advice that goes with the refusal:
// fix_args for argument problems, wait for approvals, a deny rule's next:
// (escalate by default), escalate otherwise.
func (r *Refusal) Next() types.Next {
	switch {
	case r.Approval:
		return types.NextWait
	case r.RuleNext != "":
		return r.RuleNext
	case r.Code == types.CodeUnknownTool, r.Code == types.CodeWrongType, r.Code == types.CodeMissingArguments,
		r.Code == types.CodeUnknownArguments, r.Code == types.CodeInvalidArgument:
		return types.NextFixArgs
	}
	return types.NextEscalate
}

// Check runs the pure checks on a call, cheapest first, and stops at the
// first failure: existence, args shape, completeness, no extras, types,
// constraints, permission, then the rules in order. A refusal by a rule
// comes with the checked call (an approval binds to its arguments' hash),
// as does one of a call that passed the rules but whose ownership lookup
// or quota uses cannot be evaluated (prepare); any other refusal comes
// alone. A checked call is prepared before its rules are judged, so that
// it carries its lookup and quota uses whatever they decide (an approved
// call is checked again, without the approval rules); a failed
// preparation refuses only a call the rules pass, whose refusal says more.
//
// A top-level argument declared as an integer is written in its plain form
// once it passes the schema (425000.0 and 4.25e5 become 425000), so the
// same amount always makes the same canonical arguments, hash and
// operation key.
func (v *Validator) Check(in *Input) (*Checked, *Refusal) {
	if in == nil {
		in = &Input{}
	}
	c, ok := v.tools[in.Tool]
	if !ok || (in.Key != "" && !v.catalogues.For(in.Key).Has(in.Tool)) {
		return nil, v.unknownTool(in.Tool, v.catalogues.For(in.Key))
	}

	args, r := c.checkArgs(in.Args)
	if r != nil {
		return nil, r
	}
	if perm := c.Spec.Permission; perm != "" && (in.Principal == nil || !in.Principal.Can(perm)) {
		return nil, c.forbidden(in.Principal, perm)
	}

	st, r := c.decodeState(in.State)
	if r != nil {
		return nil, r
	}

	// The checked call and its vars are one allocation: they live as long
	// as each other.
	both := &checkedVars{
		vars: expr.Vars{
			Args:      args,
			Principal: in.Principal,
			State:     st,
			RunID:     in.RunID,
			CallID:    in.CallID,
			Tool:      c.Name,
		},
	}
	vars, canonical := &both.vars, jsontext.Canonical(args)
	checked := &both.checked
	*checked = Checked{
		Tool:      c,
		Args:      args,
		Canonical: canonical,
		ArgsHash:  jsontext.Hash(canonical),
		Vars:      vars,
	}
	prepared := v.prepare(checked) // refuses only when the rules pass
	for _, rule := range c.Rules {
		if rule.Approval && in.SkipApprovalRules {
			continue
		}
		deny, err := rule.Deny.EvalBool(vars)
		if err != nil {
			return checked, &Refusal{
				Code: CodeRuleError,
				Message: fmt.Sprintf("Rule rules[%d] of %s (%s) could not be evaluated: %v. The call is refused to be safe. %s",
					rule.Index, c.Name, rule.Deny.Source(), err, doNotRetry),
				Rule:     rule.Index,
				RuleNext: types.NextEscalate,
			}
		}
		if deny {
			// The checked call comes back too: an approval binds to its
			// arguments' hash.
			return checked, c.ruleRefusal(rule, vars)
		}
	}
	return checked, prepared
}

// unknownTool refuses a name that is not a tool of the caller's catalogue;
// the message names only the tools of that catalogue.
func (v *Validator) unknownTool(name string, cat *config.Catalogue) *Refusal {
	names := v.names
	if cat != nil {
		names = cat.Callable
	}
	var next string
	switch {
	case len(names) > 0:
		next = fmt.Sprintf(" Available tools: %s. Call one of these by its exact name.", nameList(names))
	case len(v.names) > 0:
		next = " No tools are available to this run's API key. Do not retry; escalate to a person."
	default:
		next = " No tools are configured. Do not retry; escalate to a person."
	}
	msg := "No tool name was given."
	if name != "" {
		msg = fmt.Sprintf("There is no tool named %q.", shortName(name))
		if s := expr.Suggest(name, names); s != "" {
			msg += fmt.Sprintf(" Did you mean %s?", s)
		}
	}
	return &Refusal{Code: types.CodeUnknownTool, Message: msg + next, Rule: -1}
}

// decodeState decodes the run's state for a tool whose expressions (rules,
// state updates, owner, verify, quotas) can see it; nil for any other.
func (c *Compiled) decodeState(raw json.RawMessage) (map[string]any, *Refusal) {
	if !c.seesState {
		return nil, nil
	}
	st, err := state.Decode(raw)
	if err != nil {
		return nil, &Refusal{Code: types.CodeInternalError, Message: "the run's state could not be read; escalate.", Rule: -1}
	}
	return st, nil
}

// forbidden refuses a principal without the tool's permission.
func (c *Compiled) forbidden(p *types.Principal, perm string) *Refusal {
	who := "This run's principal"
	if p != nil && p.ID != "" {
		who = fmt.Sprintf("Principal %s", p.ID)
	}
	return &Refusal{
		Code: types.CodeForbidden,
		Message: fmt.Sprintf("%s does not hold the permission %s, which %s requires. Changing the arguments will not help. %s who can grant %s or act for you.",
			who, perm, c.Name, strings.TrimSuffix(doNotRetry, "."), perm),
		Rule: -1,
	}
}

// ruleRefusal is the refusal of a rule whose deny condition held.
func (c *Compiled) ruleRefusal(rule *Rule, vars *expr.Vars) *Refusal {
	var msg string
	switch {
	case rule.Message != nil:
		msg = rule.Message.MustRenderLoose(vars)
	case rule.Approval:
		msg = fmt.Sprintf("This %s call needs a person's approval (rule rules[%d]: %s). It is held until someone decides; wait for the decision instead of retrying or changing the arguments.",
			c.Name, rule.Index, rule.Deny.Source())
	default:
		msg = fmt.Sprintf("This %s call is refused by rule rules[%d] (%s). Do not retry with the same arguments; change them so the rule no longer applies, or escalate to a person.",
			c.Name, rule.Index, rule.Deny.Source())
	}
	return &Refusal{Code: rule.Code, Message: msg, Rule: rule.Index, Approval: rule.Approval, RuleNext: rule.Next}
}
