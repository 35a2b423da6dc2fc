package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// judge runs stage 1 against f.run: the pure checks, cheapest first; then,
// for a call not yet admitted, the run's step budget; then approvals and
// ownership (I/O) last. It answers the refusal, if any, or the result of a
// call that must not go on: a run with no steps left (nothing is done and
// no step taken).
func (p *Pipeline) judge(ctx context.Context, f *flight) (*validate.Refusal, *types.Result) {
	in := &validate.Input{
		Tool: f.call.Tool, Args: f.call.Args, Principal: &f.run.Principal,
		State: f.run.State, RunID: f.run.PublicID(), CallID: f.call.CallID,
		Key: f.run.Owner,
	}
	for {
		checked, refusal := f.cfg.validator.Check(in)
		if f.admission == notAdmitted && f.run.OutOfSteps() {
			// Checked once the call is judged pure, before any I/O: an
			// exhausted run asks for no approval and makes no lookup.
			return nil, types.Fail(types.CodeStepBudgetExhausted, fmt.Sprintf(exhaustedFormat, f.run.MaxSteps), types.Meta{})
		}
		if checked != nil {
			f.bind(checked)
		}
		if refusal != nil && refusal.Approval && checked != nil && !in.SkipApprovalRules {
			var approved bool
			if refusal, approved = p.approve(ctx, f, refusal); approved {
				// The rules once more, with the approval rules passed
				// over: a flat deny rule still refuses an approved action.
				in.SkipApprovalRules = true
				continue
			}
		}
		if refusal == nil && f.spec.Owner != nil {
			refusal = p.checkOwner(ctx, f)
		}
		return refusal, nil
	}
}

// rejudge reads the run again and judges the call against it. It returns
// nil when the call still passes, or its answer (a refusal).
func (p *Pipeline) rejudge(ctx context.Context, f *flight) *types.Result {
	run, err := p.store.GetRun(ctx, f.run.ID)
	if err != nil {
		p.log.Error("reading the run again failed", "run", f.run.ID, "err", err)
		return storeUnavailable("toolgate could not read the run's state (its database did not answer in time); nothing was done")
	}
	key := f.key
	f.run = run
	refusal, res := p.judge(ctx, f)
	switch {
	case res != nil:
		return res
	case refusal != nil:
		return p.refused(f, refusal)
	case f.key != key:
		// The key is derived from the arguments and the run, never the
		// state: it cannot change. Refuse rather than run under another.
		return types.Fail(types.CodeInternalError, "the call's operation key changed while it waited; nothing was done. Escalate.", types.Meta{})
	}
	return nil
}

// bind records what validation resolved: the tool and the operation key.
func (f *flight) bind(c *validate.Checked) {
	f.checked = c
	f.spec = c.Tool.Spec
	if f.spec.Effect == types.EffectRead {
		return
	}
	if key := operationKey(c, f.run.ID); key != "" {
		f.key = f.keyScope + key
	}
}

// operationKey derives the identity of a write from the operation, never the
// attempt: the tool's template, or "op:", the tool's name and a hash of
// (run, tool, canonical args) (jsontext.Hash, built here in buffers on the
// stack: one allocation, the key itself). bind scopes it to the run's
// owner (flight.keyScope, types.Run.ScopeOperationKey).
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

// approve handles a refusal by a rule that asks for a person's approval.
// The approval is bound to the exact action: tool, canonical arguments,
// principal and config version, with an expiry; and to the run that asked
// for it, so that no other run (another key's, asserting the same
// principal) is told its id or can use it. It returns approved when an
// approval admits the call (judge then checks the rules again, without the
// approval rules), or the refusal to answer with.
func (p *Pipeline) approve(ctx context.Context, f *flight, r *validate.Refusal) (_ *validate.Refusal, approved bool) {
	now := p.clock.Now()
	binding := store.Binding{Tool: f.spec.Name, ArgsHash: f.checked.ArgsHash, PrincipalID: f.run.Principal.ID, ConfigVersion: f.cfg.tools.Version, RunID: f.run.ID}
	a, err := p.store.FindApproval(ctx, binding)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval could not be looked up (toolgate's database did not answer in time); nothing was done"}, false
	}
	if a != nil && now.Before(a.ExpiresAt) {
		switch a.Status {
		case store.ApprovalPending:
			f.approvalID, f.wait = a.ID, approvalWait
			return &validate.Refusal{Code: types.CodeApprovalRequired, Rule: r.Rule, Approval: true,
				Message: fmt.Sprintf("%s Approval %s is still waiting for a person's decision.", r.Message, a.ID)}, false
		case store.ApprovalDenied:
			f.approvalID = a.ID
			msg := fmt.Sprintf("A person (%s) denied this exact action (approval %s)", orDash(a.By), a.ID)
			if a.Comment != "" {
				msg += ": " + a.Comment
			}
			return &validate.Refusal{Code: types.CodeApprovalDenied, Rule: r.Rule,
				Message: msg + ". Do not repeat it; tell the user it was declined, or take another course."}, false
		case store.ApprovalApproved:
			opKey := f.key
			if opKey == "" {
				opKey = "call:" + f.call.CallID
			}
			used, err := p.store.UseApproval(ctx, a.ID, opKey)
			if err != nil {
				return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval could not be applied (toolgate's database did not answer in time); nothing was done"}, false
			}
			if used {
				f.approvalID = a.ID
				return nil, true
			}
			// Approved, but for another operation: this one needs its own.
		}
	}
	id := "apr_" + randomID(8)
	err = p.store.CreateApproval(ctx, &store.Approval{
		ID: id, Tool: f.spec.Name, ArgsHash: f.checked.ArgsHash, Args: f.checked.Canonical,
		PrincipalID: f.run.Principal.ID, RunID: f.run.ID, ConfigVersion: f.cfg.tools.Version,
		Rule: string(r.Code), Reason: r.Message, Status: store.ApprovalPending,
		CreatedAt: now, ExpiresAt: now.Add(f.cfg.tools.ApprovalTTL.D()),
	})
	if err != nil {
		return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval request could not be recorded (toolgate's database did not answer in time); nothing was done"}, false
	}
	f.approvalID, f.wait = id, approvalWait
	return &validate.Refusal{Code: types.CodeApprovalRequired, Rule: r.Rule, Approval: true,
		Message: fmt.Sprintf("%s Approval %s has been requested from a person; it expires in %s.", r.Message, id, f.cfg.tools.ApprovalTTL)}, false
}

// approvalWait is the advice to an agent waiting for a person.
const approvalWait = time.Minute

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// checkOwner is the last validation step: the object must belong to the
// principal, by the tool's owner lookup (validate.Validator.CheckOwner,
// which this reads for). It runs before the call's deadline is set and on
// a context that is never cancelled, so it bounds the lookup itself: by
// the call's total timeout, counted from the call's start.
func (p *Pipeline) checkOwner(ctx context.Context, f *flight) *validate.Refusal {
	deadline := f.started.Add(f.spec.Timeout.Total.D())
	ctx, cancel := context.WithTimeout(ctx, deadline.Sub(p.clock.Now()))
	defer cancel()
	return f.cfg.validator.CheckOwner(ctx, f.checked, reader{p: p, cfg: f.cfg, deadline: deadline, purpose: monitor.PurposeOwner})
}
