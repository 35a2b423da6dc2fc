package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
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
	// (store.Store.Admit; see stateslot.go).
	limited
)

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

// admissionFailed answers a call the store could not admit.
func (p *Pipeline) admissionFailed(f *flight, err error) *types.Result {
	if errors.Is(err, store.ErrStepBudget) {
		return p.exhausted(f)
	}
	p.log.Error("admission failed", "run", f.run.ID, "tool", f.call.Tool, "err", err)
	return p.storeUnavailable(f, "toolgate's database did not take this call's admission in time, so nothing was done")
}

// storeUnavailable answers a call the store could not admit (it could not
// be reached, did not answer in time, or the process could not confirm its
// liveness in it): nothing was done and nothing sent, and the same call
// may be repeated once the store is back.
func (p *Pipeline) storeUnavailable(f *flight, msg string) *types.Result {
	f.wait = storeRetryAfter
	return types.Fail(types.CodeStoreUnavailable, msg, types.Meta{})
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

// exhausted answers a call refused for the run's step budget.
func (p *Pipeline) exhausted(f *flight) *types.Result {
	return types.Fail(types.CodeStepBudgetExhausted,
		fmt.Sprintf("This run has used all of its %d steps. Stop and report what was done so far.", f.run.MaxSteps), types.Meta{})
}

// answeredUnadmitted marks a limited call answered before the store
// admitted it (a refusal on judging again, a quota, run_busy): like a
// refusal of stage 1, it takes its step in the commit of its row.
func (f *flight) answeredUnadmitted() {
	if f.step == 0 {
		f.admission = stepInCommit
	}
}
