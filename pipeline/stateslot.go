package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// State rules judged in order.
//
// A rule that reads the run's state is a read followed, much later, by a
// write: between the two, other calls of the run may commit. So a call of
// a tool that reads or changes state (validate.Compiled.StateWriter) holds
// the run's state-writer slot from its admission to its commit. The slot
// is taken by the store in the same durable write that takes the step and
// begins the operation (store.Limiter.Admit), and cleared by the commit
// that settles the call, so the database is the arbiter, across processes
// and replicas.
//
// A call whose rules (owner, verify or quota expressions) read the state
// holds the slot alone (exclusive): at most one such call of a run is in
// flight, and no call that changes the state beside it. A call that only
// updates the state, its rules never reading it, shares the slot with
// others like it: their updates are pure and applied in commit order to
// the newest state, so they may run together, but never beside a call
// being judged against the state.
//
// An exclusive call is judged first against the run it read; the
// admission says the run's version when the slot was taken. If another
// call committed in between, the state may have changed, and the call is
// judged again, now that no call can change the state: a call that then
// fails its rules deletes the operation it began and is answered as
// refused. A call that finds the slot taken waits for it (woken at once by
// a commit in this process; polling the store otherwise) and is then
// judged against the new state; past its bound (see awaitWriter) it
// answers run_busy (nothing done: wait and repeat). Calls that neither
// read nor change the state never touch the slot, nor does a repeat of an
// operation that is started or completed (it waits or replays).
//
// A holder that dies leaves the slot to its lease (the call's deadline
// plus the lease margin, as its operation's) or to AbandonOwner.

// admitLimited admits a call of admission limited: it returns nil when the
// call is admitted and must execute (f.step set; a write's operation begun
// by this call), or the call's answer.
func (p *Pipeline) admitLimited(ctx context.Context, f *flight) *types.Result {
	limiter := p.store
	if res := p.flushKey(ctx, f.key); res != nil {
		f.wait = storeRetryAfter
		f.answeredUnadmitted()
		return res
	}
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
		// for it or replays it, changing no state, so it holds no slot.
		res, again := p.repeat(bctx, f, got.Existing)
		cancel()
		if !again {
			return res
		}
		// The operation ended unknown or was deleted (nothing happened):
		// admitted again, with the step it has, under the slot.
	}
}

// repeat answers a limited call whose operation exists, started or
// completed, without the state-writer slot: the stored result once the
// operation is completed, or again=true when it ends another way (the
// call must then be admitted under the slot).
func (p *Pipeline) repeat(ctx context.Context, f *flight, op *types.Operation) (res *types.Result, again bool) {
	for {
		if conflict := argsConflict(f, op); conflict != nil {
			return conflict, false
		}
		switch op.Status {
		case types.OpCompleted:
			return p.replay(f, op), false
		case types.OpUnknown:
			return nil, true
		}
		next, err := p.await(ctx, f.key)
		switch {
		case err != nil:
			f.wait = time.Second
			return types.Fail(types.CodeDuplicateInFlight, fmt.Sprintf("operation %s is being executed by another call and did not finish within this call's deadline", f.key), types.Meta{}), false
		case next == nil:
			return nil, true
		}
		op = next
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
			return nil, p.storeUnavailable(f, "toolgate cannot confirm its connection to the shared database right now, so it admits no write; nothing was sent")
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
		uses, err := f.checked.QuotaUses()
		if err != nil {
			f.answeredUnadmitted()
			return nil, p.refused(f, &validate.Refusal{Code: validate.CodeRuleError, Rule: -1,
				Message: fmt.Sprintf("A quota of %s could not be evaluated (%v), so the call is refused to be safe. Do not retry; escalate.", f.spec.Name, err)})
		}
		for _, u := range uses {
			key := u.Key
			if runLocal(u.Quota.Key) {
				// A per-run (or per-call) quota of another key's run of the
				// same id is another quota: tenancy by key.
				key = f.run.ScopeOperationKey(key)
			}
			a.Quotas = append(a.Quotas, store.QuotaClaim{Quota: u.Quota.Name, Key: key, Amount: u.Amount, Limit: u.Quota.Limit, Window: u.Quota.Window})
		}
	}
	return a, nil
}

// rejudge reads the run again and judges the call against it. It returns
// nil when the call still passes, or its answer (a refusal).
func (p *Pipeline) rejudge(ctx context.Context, f *flight) *types.Result {
	run, err := p.store.GetRun(ctx, f.run.ID)
	if err != nil {
		p.log.Error("reading the run again failed", "run", f.run.ID, "err", err)
		return p.storeUnavailable(f, "toolgate could not read the run's state (its database did not answer in time); nothing was done")
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

// awaitWriter waits until the run's state-writer slot is free (or its
// holder's lease has ended). The wait is bounded by f's deadline less the
// time one attempt needs (connect + read), or by one attempt's time when
// the deadline leaves less (a tool of one attempt); once the slot is free
// the deadline is moved, if need be, so that one whole attempt still fits.
// It answers nil when the slot may be taken, or run_busy.
func (p *Pipeline) awaitWriter(ctx context.Context, f *flight, limiter store.Limiter, claim *store.WriterClaim) *types.Result {
	attempt := f.spec.Timeout.Connect.D() + f.spec.Timeout.Read.D()
	budget := max(f.deadline.Sub(p.clock.Now())-attempt, attempt)
	defer func() {
		if now := p.clock.Now(); f.deadline.Sub(now) < attempt {
			f.deadline = now.Add(attempt)
		}
	}()
	busy := func() *types.Result {
		f.answeredUnadmitted()
		f.wait = time.Second
		return types.Fail(types.CodeRunBusy, fmt.Sprintf(
			"another call of run %s that reads or changes its state was still running when this call had to give up waiting", f.run.ID), types.Meta{})
	}
	if budget <= 0 {
		return busy()
	}
	wctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	delay := 2 * time.Millisecond
	for {
		ch := p.waiters.wait(runSlotKey(f.run.ID))
		holders, err := limiter.StateWriters(wctx, f.run.ID)
		switch {
		case err != nil && wctx.Err() != nil:
			return busy()
		case err != nil:
			p.log.Error("reading the run's state writers failed", "run", f.run.ID, "err", err)
			return p.storeUnavailable(f, "toolgate could not read the run's state (its database did not answer in time); nothing was done")
		case !store.Conflicts(holders, claim, p.clock.Now()):
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ch:
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			return busy()
		}
		t.Stop()
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// runSlotKey is the waiters' key of a run's slot (operation keys never
// start with a NUL byte).
func runSlotKey(runID string) string { return "\x00slot\x00" + runID }

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

// quotaExceeded answers a call a quota refused: what is used and left, and
// when enough frees.
func (p *Pipeline) quotaExceeded(f *flight, d *store.QuotaDenial) *types.Result {
	left := max(d.Limit-d.Used, 0)
	msg := ""
	for _, q := range f.checked.Tool.Quotas {
		if q.Name == d.Quota && q.Message != nil {
			msg = q.Message.MustRenderLoose(f.checked.Vars) + " "
		}
	}
	msg += fmt.Sprintf("Quota %s for %s: %d of %d used in the last %s, %d left; this call needs %d.",
		d.Quota, d.Key, d.Used, d.Limit, quotaWindow(f, d.Quota), left, d.Amount)
	if d.FreesAt.IsZero() {
		msg += " It can never fit: it is larger than the whole quota."
	} else {
		wait := max(d.FreesAt.Sub(p.clock.Now()), time.Millisecond)
		f.wait = wait
		msg += fmt.Sprintf(" Enough frees at %s (in %s).", d.FreesAt.UTC().Format(time.RFC3339), wait.Round(time.Second))
	}
	return types.Fail(types.CodeQuotaExceeded, msg, types.Meta{})
}

func quotaWindow(f *flight, name string) time.Duration {
	for _, q := range f.checked.Tool.Quotas {
		if q.Name == name {
			return q.Window
		}
	}
	return 0
}

// runLocal reports whether a quota key names the run or the call, ids that
// each bearer key chooses for itself (see types.ScopedRunID), rather than a
// principal or an argument shared by design.
func runLocal(key *expr.Template) bool {
	for _, p := range key.Placeholders() {
		if p == "run_id" || p == "call_id" {
			return true
		}
	}
	return false
}
