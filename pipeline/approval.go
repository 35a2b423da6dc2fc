package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// approve handles a refusal by a rule that asks for a person's approval.
// The approval is bound to the exact action: tool, canonical arguments,
// principal and config version, with an expiry; and to the run that asked
// for it, so that no other run (another key's, asserting the same
// principal) is told its id or can use it. It returns nil when an
// approval admits the call (the rules are then checked again, without the
// approval rules), or the refusal to answer with.
func (p *Pipeline) approve(ctx context.Context, f *flight, r *validate.Refusal) *validate.Refusal {
	now := p.clock.Now()
	binding := store.Binding{Tool: f.spec.Name, ArgsHash: f.checked.ArgsHash, PrincipalID: f.run.Principal.ID, ConfigVersion: f.cfg.tools.Version, RunID: f.run.ID}
	a, err := p.store.FindApproval(ctx, binding)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval could not be looked up (toolgate's database did not answer in time); nothing was done"}
	}
	if a != nil && now.Before(a.ExpiresAt) {
		switch a.Status {
		case store.ApprovalPending:
			f.approvalID, f.wait = a.ID, approvalWait
			return &validate.Refusal{Code: types.CodeApprovalRequired, Rule: r.Rule, Approval: true,
				Message: fmt.Sprintf("%s Approval %s is still waiting for a person's decision.", r.Message, a.ID)}
		case store.ApprovalDenied:
			f.approvalID = a.ID
			msg := fmt.Sprintf("A person (%s) denied this exact action (approval %s)", orDash(a.By), a.ID)
			if a.Comment != "" {
				msg += ": " + a.Comment
			}
			return &validate.Refusal{Code: types.CodeApprovalDenied, Rule: r.Rule,
				Message: msg + ". Do not repeat it; tell the user it was declined, or take another course."}
		case store.ApprovalApproved:
			opKey := f.key
			if opKey == "" {
				opKey = "call:" + f.call.CallID
			}
			used, err := p.store.UseApproval(ctx, a.ID, opKey)
			if err != nil {
				return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval could not be applied (toolgate's database did not answer in time); nothing was done"}
			}
			if used {
				f.approvalID = a.ID
				return p.recheckApproved(f)
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
		return &validate.Refusal{Code: types.CodeStoreUnavailable, Rule: -1, Message: "the approval request could not be recorded (toolgate's database did not answer in time); nothing was done"}
	}
	f.approvalID, f.wait = id, approvalWait
	return &validate.Refusal{Code: types.CodeApprovalRequired, Rule: r.Rule, Approval: true,
		Message: fmt.Sprintf("%s Approval %s has been requested from a person; it expires in %s.", r.Message, id, f.cfg.tools.ApprovalTTL)}
}

// recheckApproved runs the rules again with the approval rules passed over:
// a flat deny rule still refuses an approved action.
func (p *Pipeline) recheckApproved(f *flight) *validate.Refusal {
	checked, refusal := f.cfg.validator.Check(&validate.Input{
		Tool: f.call.Tool, Args: f.call.Args, Principal: &f.run.Principal,
		State: f.state, RunID: f.run.PublicID(), CallID: f.call.CallID, SkipApprovalRules: true,
		Key: f.run.Owner,
	})
	if checked != nil {
		f.checked = checked
	}
	return refusal
}

// approvalWait is the advice to an agent waiting for a person.
const approvalWait = time.Minute

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
