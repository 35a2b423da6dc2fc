package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// judge runs stage 1 against f.run: the pure checks, cheapest first, then
// approvals and ownership (I/O) last. It answers the refusal, if any, or a
// result when the call cannot be judged at all. The state is decoded only
// for tools whose expressions can see it.
func (p *Pipeline) judge(ctx context.Context, f *flight) (*validate.Refusal, *types.Result) {
	f.state = nil
	if c, ok := f.cfg.validator.Tool(f.call.Tool); ok && (len(c.Rules) > 0 || len(c.StateExprs) > 0 || c.OwnerArgs != nil || c.VerifyArgs != nil || len(c.Quotas) > 0) {
		st, err := state.Decode(f.run.State)
		if err != nil {
			return nil, types.Fail(types.CodeInternalError, "the run's state could not be read; escalate.", types.Meta{})
		}
		f.state = st
	}
	checked, refusal := f.cfg.validator.Check(&validate.Input{
		Tool: f.call.Tool, Args: f.call.Args, Principal: &f.run.Principal,
		State: f.state, RunID: f.run.PublicID(), CallID: f.call.CallID,
		Key: f.run.Owner,
	})
	if checked != nil {
		f.bind(checked)
	}
	if refusal != nil && refusal.Approval && checked != nil {
		refusal = p.approve(ctx, f, refusal)
	}
	if refusal == nil && f.spec.Owner != nil {
		refusal = p.checkOwner(ctx, f)
	}
	return refusal, nil
}

// bind records what validation resolved: the tool and the operation key.
func (f *flight) bind(c *validate.Checked) {
	f.checked = c
	f.spec = c.Tool.Spec
	if f.spec.Effect != types.EffectRead {
		f.key = f.run.ScopeOperationKey(operationKey(c, f.run.ID))
	}
}

// operationKey derives the identity of a write from the operation, never the
// attempt: the tool's template, or "op:", the tool's name and a hash of
// (run, tool, canonical args) (expr.Hash, built here in buffers on the
// stack: one allocation, the key itself). bind scopes it to the run's
// owner (types.Run.ScopeOperationKey).
func operationKey(c *validate.Checked, runID string) string {
	if c.Tool.KeyTemplate != nil {
		if k, err := c.Tool.KeyTemplate.Render(c.Vars); err == nil {
			return k
		}
	}
	var idBuf [256]byte
	id := append(append(append(append(append(idBuf[:0], runID...), 0), c.Tool.Name...), 0), c.Canonical...)
	sum := sha256.Sum256(id)
	var keyBuf [128]byte
	key := append(append(append(keyBuf[:0], "op:"...), c.Tool.Name...), ':')
	return string(hex.AppendEncode(key, sum[:16]))
}

// refused answers a refusal of stage 1.
func (p *Pipeline) refused(f *flight, r *validate.Refusal) *types.Result {
	if r.Rule >= 0 {
		f.ruleNext = ruleNext(r)
	}
	return types.Fail(r.Code, r.Message, types.Meta{})
}

func ruleNext(r *validate.Refusal) types.Next {
	switch {
	case r.Code == types.CodeApprovalDenied:
		return types.NextStop
	case r.Approval:
		return types.NextWait
	}
	// A deny rule's next: (escalate by default), so that meta.next agrees
	// with what the rule's message tells the model.
	return r.RuleNext
}
