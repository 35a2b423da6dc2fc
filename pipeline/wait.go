package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// A call waits on another in two places: for the run's state-writer slot
// (awaitWriter, a limited call's admission) and for the outcome of an
// operation another call is executing (await, a repeat of a write). Both
// are woken at once by an end in this process (waiters) and poll the store
// otherwise, with a growing delay.

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
			return storeUnavailable("toolgate could not read the run's state (its database did not answer in time); nothing was done")
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

// await waits for another call's started operation to end. It returns the
// operation once it is no longer started, nil if its record was removed
// (nothing happened), or ctx's error at the deadline.
func (p *Pipeline) await(ctx context.Context, key string) (*types.Operation, error) {
	delay := 5 * time.Millisecond
	for {
		ch := p.waiters.wait(key)
		op, err := p.store.GetOperation(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if op.Status != types.OpStarted {
			return op, nil
		}
		if now := p.clock.Now(); op.LeaseUntil.Before(now) {
			// Its owner is presumed dead: the outcome is unknown.
			if _, err := p.store.ExpireLeases(ctx, now); err != nil {
				return nil, err
			}
			continue
		}
		if p.fencer != nil {
			// Its owner's liveness may be gone, and it fenced: then its
			// operations are unknown now, not at their leases' end.
			gone, err := p.fencer.TakeOver(ctx, op.Owner)
			if err != nil && ctx.Err() == nil {
				p.log.Warn("could not check the owner of an operation in flight", "key", key, "owner", op.Owner, "err", err)
			}
			if gone {
				continue
			}
		}
		t := time.NewTimer(delay)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
		delay = min(delay*2, 250*time.Millisecond)
	}
}

// waiters wakes calls waiting in this process for an operation's outcome;
// other processes poll.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (w *waiters) wait(key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	ch, ok := w.m[key]
	if !ok {
		ch = make(chan struct{})
		w.m[key] = ch
	}
	return ch
}

func (w *waiters) notify(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[key]; ok {
		close(ch)
		delete(w.m, key)
	}
}
