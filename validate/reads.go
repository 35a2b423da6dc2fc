package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

// The reads that judge a checked call, made through the caller's Reader:
// the ownership check (stage 1, CheckOwner) and the verify read that
// settles an unknown outcome (Verify); and the verdicts on their answers.

// A Reader makes a read for a checked call: its ownership lookup or its
// verify read, a call of the read tool l.Tool with the arguments l.Args.
// The pipeline's sends it as it sends any call of that tool (its timeouts,
// retries and breaker), within the call's deadline.
type Reader interface {
	Read(ctx context.Context, l *Lookup) (json.RawMessage, *ReadError)
}

// ReadError is a read that brought back no answer to judge.
type ReadError struct {
	// Code is the read's failure code; rejected says the dependency
	// refused it (for an ownership lookup: there is no such object for
	// the principal to see).
	Code types.Code
	// Message says what went wrong, in one line.
	Message string
	// TimedOut says the read did not answer within the call's deadline.
	TimedOut bool
}

// CheckOwner is the last check of stage 1, for a call of a tool with an
// owner block: the ownership lookup (Checked.Owner) through r, then the
// verdict on its answer. It returns nil when the principal owns the
// object; not_owner when it does not, or when the lookup was rejected; a
// timeout, or the read's own code, when the lookup could not be made.
// Nothing is done in any case, and a refused call may be repeated.
func (v *Validator) CheckOwner(ctx context.Context, c *Checked, r Reader) *Refusal {
	owner := c.Tool.Spec.Owner
	switch {
	case owner == nil:
		return nil
	case c.Owner == nil:
		// Its preparation failed, and refused the call: fail closed.
		return &Refusal{Code: types.CodeInternalError, Rule: -1, Message: "the ownership check could not be prepared; escalate."}
	}
	data, err := r.Read(ctx, c.Owner)
	switch {
	case err != nil && err.TimedOut:
		return &Refusal{Code: types.CodeTimeout, Rule: -1, Message: fmt.Sprintf("the ownership check with %s did not answer within the call's deadline of %s. Nothing was done; try again later",
			owner.Lookup, c.Tool.Spec.Timeout.Total)}
	case err != nil && err.Code != types.CodeRejected:
		return &Refusal{Code: err.Code, Rule: -1, Message: fmt.Sprintf("the ownership check with %s could not be made: %s. Nothing was done", owner.Lookup, err.Message)}
	}
	return c.ownerVerdict(data, err == nil)
}

// Verify makes the verify read of c, a write whose outcome is unknown,
// through r, and judges its answer (verify.found): found says the write is
// seen to have happened, and answer is what the call answers with then
// (verify.result's pick, or the read's answer). why says why nothing could
// be judged: the read could not be prepared, made, or its answer
// evaluated ("" when it was judged).
func (v *Validator) Verify(ctx context.Context, c *Checked, r Reader) (found bool, answer json.RawMessage, why string) {
	l, err := v.verifyLookup(c)
	if err != nil {
		return false, nil, "the verify read could not be prepared: " + err.Error()
	}
	data, rerr := r.Read(ctx, l)
	if rerr != nil {
		return false, nil, fmt.Sprintf("the verify read %s failed: %s", l.Tool.Name, rerr.Message)
	}
	found, answer, err = c.verified(data)
	if err != nil {
		return false, nil, "the verify read's answer could not be judged: " + err.Error()
	}
	return found, answer, ""
}

// verifyLookup is the verify read of c, a call of a tool with a verify
// block: its tool and its arguments, evaluated over the call.
func (v *Validator) verifyLookup(c *Checked) (*Lookup, error) {
	if c.Tool.Spec.Verify == nil {
		return nil, fmt.Errorf("%s has no verify read", c.Tool.Name)
	}
	return v.lookup(c, c.Tool.Spec.Verify.Lookup, c.Tool.VerifyArgs)
}

// ownerVerdict judges the answer of c's ownership lookup: nil when the
// principal owns the object, not_owner when found is false (the lookup
// said there is no such object for us to see) or owner.expect does not
// hold of data (fail closed: an answer it cannot be evaluated on too).
func (c *Checked) ownerVerdict(data json.RawMessage, found bool) *Refusal {
	if found && c.Tool.OwnerExpect != nil {
		if ok, err := judge(c, c.Tool.OwnerExpect, data, "owner.expect"); err == nil && ok {
			return nil
		}
	}
	return c.notOwner()
}

// verified judges the answer of c's verify read: found when verify.found
// holds of data. answer is what the verified call answers with: the pick
// of verify.result (canonical JSON) when the tool has one and it can be
// evaluated, data otherwise.
func (c *Checked) verified(data json.RawMessage) (found bool, answer json.RawMessage, err error) {
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
