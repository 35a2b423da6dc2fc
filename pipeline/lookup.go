package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// lookup runs a read tool on the pipeline's behalf (ownership and verify
// reads): breaker and retries as for any read, no ledger, no row of its own.
// Its retries stop at deadline, the calling tool's; ctx must end there too.
func (p *Pipeline) lookup(ctx context.Context, f *flight, deadline time.Time, purpose monitor.Purpose, tool string, args json.RawMessage) (json.RawMessage, *execute.Failure, error) {
	c, ok := f.cfg.validator.Tool(tool)
	if !ok {
		return nil, nil, fmt.Errorf("lookup tool %q is not configured", tool)
	}
	decoded, err := expr.DecodeObject(args)
	if err != nil {
		return nil, nil, err
	}
	r := &request{
		attempt: execute.Attempt{Tool: c.Spec, Dependency: f.cfg.tools.Dependencies[c.Spec.Dependency], Args: decoded},
		purpose: purpose, deadline: deadline,
	}
	ctx, span := p.startLookup(ctx, purpose, tool)
	out := p.attempts(ctx, f.cfg, r)
	endLookup(span, out)
	if out.resp != nil {
		return out.resp.Data, nil, nil
	}
	if out.fail == nil && out.open != nil {
		return nil, &execute.Failure{Kind: execute.KindConnectFailed, Code: types.CodeCircuitOpen, Message: out.open.Error(), Transient: true}, nil
	}
	return nil, out.fail, nil
}

// checkOwner is the last validation step: the object must belong to the
// principal, by the tool's owner lookup. It runs before the call's deadline
// is set and on a context that is never cancelled, so it bounds the lookup
// itself: by the call's total timeout, counted from the call's start.
func (p *Pipeline) checkOwner(ctx context.Context, f *flight) *validate.Refusal {
	owner := f.spec.Owner
	args, err := f.cfg.validator.LookupArgs(f.checked.Tool.OwnerArgs, f.checked)
	if err != nil {
		return &validate.Refusal{Code: types.CodeInternalError, Message: "the ownership check could not be prepared (" + err.Error() + "); escalate.", Rule: -1}
	}
	deadline := f.started.Add(f.spec.Timeout.Total.D())
	ctx, cancel := context.WithTimeout(ctx, deadline.Sub(p.clock.Now()))
	defer cancel()
	data, fail, err := p.lookup(ctx, f, deadline, monitor.PurposeOwner, owner.Lookup, args)
	switch {
	case err != nil:
		return &validate.Refusal{Code: types.CodeInternalError, Message: "the ownership check failed (" + err.Error() + "); escalate.", Rule: -1}
	case fail != nil && (fail.Kind == execute.KindCanceled || ctx.Err() != nil):
		// The lookup did not answer within the call's deadline. A read:
		// nothing was done, and the call may be repeated.
		return &validate.Refusal{Code: types.CodeTimeout, Message: fmt.Sprintf("the ownership check with %s did not answer within the call's deadline of %s. Nothing was done; try again later", owner.Lookup, f.spec.Timeout.Total), Rule: -1}
	case fail != nil && fail.Code == types.CodeRejected:
		// The lookup says there is no such object for us to see.
		return validate.NotOwner(f.checked)
	case fail != nil:
		return &validate.Refusal{Code: fail.Code, Message: fmt.Sprintf("the ownership check with %s could not be made: %s. Nothing was done", owner.Lookup, fail.Message), Rule: -1}
	}
	ok, err := f.cfg.validator.OwnerAccepts(f.checked, data)
	if err != nil || !ok {
		return validate.NotOwner(f.checked)
	}
	return nil
}

// verify runs the tool's verify read: found reports whether the write is
// seen to have happened.
func (p *Pipeline) verify(ctx context.Context, f *flight) (found bool, data json.RawMessage, why string) {
	v := f.spec.Verify
	args, err := f.cfg.validator.LookupArgs(f.checked.Tool.VerifyArgs, f.checked)
	if err != nil {
		return false, nil, "the verify read could not be prepared: " + err.Error()
	}
	data, fail, err := p.lookup(ctx, f, f.deadline, monitor.PurposeVerify, v.Lookup, args)
	if err != nil {
		return false, nil, err.Error()
	}
	if fail != nil {
		return false, nil, fmt.Sprintf("the verify read %s failed: %s", v.Lookup, fail.Message)
	}
	vars := *f.checked.Vars
	decoded, err := expr.Decode(data)
	if err != nil {
		return false, nil, "the verify read's answer could not be read"
	}
	vars.Result = decoded
	ok, err := f.checked.Tool.VerifyFound.EvalBool(&vars)
	if err != nil {
		return false, nil, "the verify condition could not be evaluated: " + err.Error()
	}
	if !ok {
		return false, data, "" // the observation says it was not found
	}
	if pick := f.checked.Tool.VerifyResult; pick != nil {
		if picked, err := pick.Eval(&vars); err == nil {
			return true, expr.Canonical(picked), ""
		}
	}
	return true, data, ""
}

// unknownOutcome handles this call's own write whose outcome is unknown:
// never re-sent blindly; settled by the verify read when there is one.
func (p *Pipeline) unknownOutcome(ctx context.Context, f *flight, res *types.Result) *types.Result {
	if f.spec.Verify == nil {
		f.settle(types.OpUnknown)
		return res
	}
	return p.settleByVerify(ctx, f, res.Error.Message)
}

// verifyUnknown handles a repeat of an operation whose outcome is unknown:
// verify before anything else.
func (p *Pipeline) verifyUnknown(ctx context.Context, f *flight, op *types.Operation) *types.Result {
	f.delivered = true
	if f.spec.Verify == nil {
		return types.Fail(types.CodeUnknownOutcome, fmt.Sprintf("an earlier attempt of operation %s may or may not have been carried out, and toolgate will not send it again without a verify read", op.Key), types.Meta{})
	}
	return p.settleByVerify(ctx, f, fmt.Sprintf("an earlier attempt of operation %s ended without a clear answer", op.Key))
}

func (p *Pipeline) settleByVerify(ctx context.Context, f *flight, what string) *types.Result {
	found, data, why := p.verify(ctx, f)
	if f.fence != nil && !p.fencer.Holds(*f.fence) {
		// The claim may be another process's by now: settle nothing.
		return types.Fail(types.CodeUnknownOutcome, what+"; toolgate lost its connection to the shared database while checking, so it settled nothing. Repeat the call to check again.", types.Meta{})
	}
	if found {
		f.settle(types.OpCompleted)
		res := types.OK(data, types.Meta{Verified: true})
		return res
	}
	f.settle(types.OpUnknown)
	f.wait = f.spec.Timeout.Read.D()
	if why != "" {
		what += "; " + why
	}
	return types.Fail(types.CodeUnknownOutcome, what, types.Meta{})
}
