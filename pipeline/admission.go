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

// admission is how a call takes its step of the run's budget, and with
// it, for a write, its operation: decided once, by admissionFor, right
// after validation.
type admission uint8

const (
	// notAdmitted: the call takes no step; its row is recorded without
	// one. The zero value: a call refused for the step budget, before or
	// after validation, or one the store could not admit.
	notAdmitted admission = iota
	// stepInCommit: a call that begins no operation (a read, a refusal)
	// takes its step in the commit of its row, its one durable write
	// (store.Commit.TakeStep). A read that then finds the budget spent is
	// answered step_budget_exhausted: its request changed nothing.
	stepInCommit
	// stepFirst: the step is taken on its own (store.AdmitStep) before
	// anything else; a write then begins its operation in a second write.
	// For settlements (Reconcile).
	stepFirst
	// stepWithBegin: a write takes its step in the same durable write that
	// begins its operation (store.Store.AdmitAndBegin).
	stepWithBegin
	// limited: a call that reads or changes the run's state, or uses a
	// quota, takes its step, the run's state-writer slot, its operation
	// and its quota reservations in one durable write
	// (store.Store.Admit; see admitLimited).
	limited
)

// admit is the call's admission, right after stage 1: it takes the call's
// step (a refusal's too) the way admissionFor decides, answers a refusal
// once its step is taken, and sets the call's deadline. A limited call is
// admitted under its limits first: a wait for the run's state-writer slot
// may move the deadline (see the package doc). It returns the time the
// call has left to run, or its answer.
func (p *Pipeline) admit(ctx context.Context, f *flight, refusal *validate.Refusal) (time.Duration, *types.Result) {
	f.admission = p.admissionFor(f, refusal != nil)
	if res := p.takeStepFirst(ctx, f); res != nil {
		return 0, res
	}
	if refusal != nil {
		return 0, p.refused(f, refusal)
	}
	f.deadline = f.started.Add(f.spec.Timeout.Total.D())
	timeout := f.spec.Timeout.Total.D()
	if res := p.awaitRecords(ctx, f); res != nil {
		return 0, res
	}
	if f.admission == limited {
		if res := p.admitLimited(ctx, f); res != nil {
			return 0, res
		}
		timeout = f.deadline.Sub(p.clock.Now())
	}
	return timeout, nil
}

// awaitRecords makes a repeat of an operation wait, within the call's
// deadline, until the outbox has written the records an earlier call of it
// kept (flushKey), so that the ledger it is judged against knows the
// earlier outcome. It answers nil, or store_unavailable: a limited call
// then takes its step in the commit of its row, as one answered before
// the store admitted it; a write begun with its step takes none.
func (p *Pipeline) awaitRecords(ctx context.Context, f *flight) *types.Result {
	res := p.flushKey(ctx, f.key, f.deadline)
	if res != nil && f.admission == limited {
		f.answeredUnadmitted()
	}
	return res
}

// admissionFor decides how f is admitted, refused (by validation) or not.
func (p *Pipeline) admissionFor(f *flight, refused bool) admission {
	write := !refused && f.spec.Effect == types.EffectWrite
	switch {
	case !refused && f.expectKey == "" && f.checked.Tool.Limited():
		return limited
	case write && (f.expectKey == "" || f.expectKey == f.key):
		return stepWithBegin
	case !write && f.expectKey == "":
		return stepInCommit
	}
	return stepFirst
}

// takeStepFirst takes f's step on its own when its admission says so; it
// answers nil, or the call's answer when the store did not admit it.
func (p *Pipeline) takeStepFirst(ctx context.Context, f *flight) *types.Result {
	if f.admission != stepFirst {
		return nil
	}
	ctx, cancel := p.admitCtx(ctx, f)
	defer cancel()
	step, err := p.store.AdmitStep(ctx, f.run.ID)
	if err != nil {
		f.admission = notAdmitted
		return p.admissionFailed(f, err)
	}
	f.step = step
	return nil
}

// admitCtx bounds the admission of f by the call's deadline, its start
// plus its total timeout: time spent waiting on the store counts.
func (p *Pipeline) admitCtx(ctx context.Context, f *flight) (context.Context, context.CancelFunc) {
	if f.spec == nil {
		return context.WithTimeout(ctx, commitGrace)
	}
	// Durations, not deadlines: the pipeline's clock may not be the wall's.
	return context.WithTimeout(ctx, f.started.Add(f.spec.Timeout.Total.D()).Sub(p.clock.Now()))
}

// admissionFailed answers a call the store could not admit.
func (p *Pipeline) admissionFailed(f *flight, err error) *types.Result {
	if errors.Is(err, store.ErrStepBudget) {
		return exhausted(f.run.MaxSteps)
	}
	p.log.Error("admission failed", "run", f.run.ID, "tool", f.call.Tool, "err", err)
	return storeUnavailable("toolgate's database did not take this call's admission in time, so nothing was done")
}

// exhausted answers a call refused for its run's step budget, of
// maxSteps steps.
func exhausted(maxSteps int64) *types.Result {
	return types.Fail(types.CodeStepBudgetExhausted, fmt.Sprintf(exhaustedFormat, maxSteps), types.Meta{})
}

// exhaustedFormat is the message of step_budget_exhausted, of the run's
// max_steps.
const exhaustedFormat = "This run has used all of its %d steps. Stop and report what was done so far."

// storeUnavailable answers a call the store could not admit (it could not
// be reached, did not answer in time, or the process could not confirm its
// liveness in it): nothing was done and nothing sent, and the same call
// may be repeated once the store is back. Feedback advises the wait (a
// second at least).
func storeUnavailable(msg string) *types.Result {
	return types.Fail(types.CodeStoreUnavailable, msg, types.Meta{})
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

// answeredUnadmitted marks a limited call answered before the store
// admitted it (a refusal on judging again, a quota, run_busy): like a
// refusal of stage 1, it takes its step in the commit of its row.
func (f *flight) answeredUnadmitted() {
	if f.step == 0 {
		f.admission = stepInCommit
	}
}

// admitLimited admits a call of admission limited: it returns nil when the
// call is admitted and must execute (f.step set; a write's operation begun
// by this call), or the call's answer.
func (p *Pipeline) admitLimited(ctx context.Context, f *flight) *types.Result {
	limiter := p.store
	for {
		a, res := p.storeAdmission(f)
		if res != nil {
			return res
		}
		// Its store waits count against the deadline too.
		actx, cancel := context.WithTimeout(ctx, f.deadline.Sub(p.clock.Now()))
		got, err := limiter.Admit(actx, a)
		cancel()
		switch {
		case errors.Is(err, store.ErrWriterBusy):
			if res := p.awaitWriter(ctx, f, limiter, a.Writer); res != nil {
				return res
			}
			if res := p.rejudge(ctx, f); res != nil {
				f.answeredUnadmitted()
				return res
			}
			continue
		case err != nil:
			return p.admissionFailed(f, err)
		case got.Denied != nil:
			f.answeredUnadmitted()
			return p.quotaExceeded(f, got.Denied)
		}
		f.step = got.Step
		if got.Writer {
			f.holder = a.Writer.Holder
			if !a.Writer.Shared && got.Version != f.run.Version {
				// Another call committed since f.run was read: judge again
				// against the state this call now holds alone.
				if res := p.rejudge(ctx, f); res != nil {
					if got.Began {
						f.settle("") // nothing was sent: forget the operation
					}
					return res
				}
			}
		}
		if a.Operation == nil || got.Began {
			return nil
		}
		bctx, cancel := context.WithTimeout(ctx, f.deadline.Sub(p.clock.Now()))
		if got.Writer {
			// The operation exists and may need a verify or a re-send
			// (unknown): the ledger decides, under the slot.
			res := p.begin(bctx, f, false)
			cancel()
			return res
		}
		// A repeat of an operation that is started or completed: it waits
		// for it or replays it, changing no state, so it holds no slot. One
		// that is unknown is claimed here only by a call that needs no
		// slot (a quota alone limits it); a state writer is admitted again
		// and claims it under the slot.
		res, again := p.existing(bctx, f, got.Existing, a.Writer == nil)
		cancel()
		if !again {
			return res
		}
		// The operation ended unknown or was deleted (nothing happened):
		// admitted again, with the step it has, under the slot.
	}
}

// storeAdmission builds the store's admission of f: the slot for a state
// writer, the operation for a write, and the quota claims.
func (p *Pipeline) storeAdmission(f *flight) (*store.Admission, *types.Result) {
	now := p.clock.Now()
	a := &store.Admission{RunID: f.run.ID, Now: now, Step: f.step}
	c := f.checked.Tool
	owner := p.owner
	if p.fencer != nil && f.spec.Effect == types.EffectWrite {
		// Fencing, as in begin: no write is admitted by a process that
		// cannot confirm it is alive in the shared store, and its
		// operation and slot are held under the fence's owner id.
		fence, err := p.fencer.Fence()
		if err != nil {
			p.log.Error("write not admitted: no liveness in the store", "key", f.key, "err", err)
			f.answeredUnadmitted()
			return nil, storeUnavailable("toolgate cannot confirm its connection to the shared database right now, so it admits no write; nothing was sent")
		}
		owner, f.fence = fence.Owner, &fence
	}
	if c.StateWriter {
		a.Writer = &store.WriterClaim{Holder: owner + "/" + f.call.CallID + "/" + randomID(4), Owner: owner,
			LeaseUntil: f.deadline.Add(p.margin), Shared: !c.StateReader}
	}
	if f.spec.Effect == types.EffectWrite {
		a.Operation = &types.Operation{
			Key: f.key, ArgsHash: f.checked.ArgsHash, Args: f.checked.Canonical, RunID: f.run.ID, Tool: f.spec.Name,
			Status: types.OpStarted, Owner: owner,
			LeaseUntil: f.deadline.Add(p.margin), CreatedAt: now, UpdatedAt: now,
		}
		for _, u := range f.checked.Quotas {
			key := u.Key
			if u.Quota.RunLocal {
				// A per-run (or per-call) quota of another key's run of the
				// same id is another quota: tenancy by key.
				key = f.keyScope + key
			}
			a.Quotas = append(a.Quotas, store.QuotaClaim{Quota: u.Quota.Name, Key: key, Amount: u.Amount, Limit: u.Quota.Limit, Window: u.Quota.Window})
		}
	}
	return a, nil
}

// quotaExceeded answers a call a quota refused: what is used and left, and
// when enough frees.
func (p *Pipeline) quotaExceeded(f *flight, d *store.QuotaDenial) *types.Result {
	left := max(d.Limit-d.Used, 0)
	msg, window := "", time.Duration(0)
	for _, q := range f.checked.Tool.Quotas {
		if q.Name != d.Quota {
			continue
		}
		window = q.Window
		if q.Message != nil {
			msg = q.Message.MustRenderLoose(f.checked.Vars) + " "
		}
	}
	msg += fmt.Sprintf("Quota %s for %s: %d of %d used in the last %s, %d left; this call needs %d.",
		d.Quota, d.Key, d.Used, d.Limit, window, left, d.Amount)
	if d.FreesAt.IsZero() {
		msg += " It can never fit: it is larger than the whole quota."
	} else {
		wait := max(d.FreesAt.Sub(p.clock.Now()), time.Millisecond)
		f.wait = wait
		msg += fmt.Sprintf(" Enough frees at %s (in %s).", d.FreesAt.UTC().Format(time.RFC3339), wait.Round(time.Second))
	}
	return types.Fail(types.CodeQuotaExceeded, msg, types.Meta{})
}

// releaseSlot frees the slot of a call whose commit could not be written
// (the commit releases it otherwise), and wakes this process's waiters.
func (p *Pipeline) releaseSlot(ctx context.Context, f *flight, committed bool) {
	if f.holder == "" {
		return
	}
	if !committed {
		if err := p.store.ReleaseStateWriter(ctx, f.run.ID, f.holder); err != nil {
			p.log.Warn("releasing the state-writer slot failed; it frees when its lease ends", "run", f.run.ID, "err", err)
		}
	}
	f.holder = ""
	p.waiters.notify(runSlotKey(f.run.ID))
}
