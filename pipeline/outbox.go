package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// The outbox keeps the records of calls answered while the store could not
// take them (unrecorded) and writes them as soon as it can: a goroutine,
// started by the first record kept and ended once none is left, tries the
// oldest every retryEvery; a repeat of an operation whose record is kept
// waits for it to be written (flushKey, from admission's awaitRecords),
// so that no repeat is judged
// against a ledger that does not know the earlier outcome.
// docs/reliability-postgres.md says what a caller sees.

// Outbox timings.
const (
	// retryEvery is the wait between two tries of the outbox's writer.
	retryEvery = 200 * time.Millisecond
	// commitGrace is how long after its deadline a call may wait for its
	// records to be written before it is answered without them, and one
	// outbox write's bound.
	commitGrace = 500 * time.Millisecond
	// closeFlush bounds the outbox's last tries at Close, and lookFor
	// the outbox's look for the row of a try whose outcome is unknown.
	closeFlush = 5 * time.Second
	lookFor    = 2 * time.Second
)

// kept is one call's records that the store did not take.
type kept struct {
	c *store.Commit
	// key is the call's operation key ("" for none) and fence the
	// liveness its write was begun under (nil for none).
	key   string
	fence *store.Fence
	// mu serialises the tries of the writer and of a repeat (flushKey);
	// it guards the fields below and c.
	mu sync.Mutex
	// uncertain: an earlier try may have been written (its outcome is
	// unknown): look for the row before writing it again.
	uncertain bool
	// written: in the store now (or dropped); the outbox forgets it.
	written bool
	// done is closed once written.
	done chan struct{}
}

// outbox is the pipeline's list of kept records, oldest first.
type outbox struct {
	mu      sync.Mutex
	items   []*kept
	running bool
	closed  bool
	done    chan struct{} // closed when the running writer ends
	stop    chan struct{} // closed by close
}

// keep adds k and starts the writer if it is not running.
func (p *Pipeline) keep(k *kept) {
	o := &p.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	k.done = make(chan struct{})
	o.items = append(o.items, k)
	if o.running || o.closed {
		return
	}
	if o.stop == nil {
		o.stop = make(chan struct{})
	}
	o.running, o.done = true, make(chan struct{})
	go p.drain(o.done, o.stop)
}

// Unrecorded is the number of calls answered whose records toolgate still
// holds for its store (see docs/reliability-postgres.md).
func (p *Pipeline) Unrecorded() int {
	p.outbox.mu.Lock()
	defer p.outbox.mu.Unlock()
	return len(p.outbox.items)
}

// drain writes the kept records, oldest first, until none is left or the
// outbox is closed.
func (p *Pipeline) drain(done, stop chan struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if p.flushAll(context.Background()) {
			return
		}
		t.Reset(retryEvery)
	}
}

// flushAll tries every kept record in order, stopping at the first the
// store does not take; it reports whether none is left (the writer then
// ends, under the lock, so that keep starts another).
func (p *Pipeline) flushAll(ctx context.Context) (empty bool) {
	o := &p.outbox
	for {
		o.mu.Lock()
		if len(o.items) == 0 {
			o.running = false
			o.mu.Unlock()
			return true
		}
		k := o.items[0]
		o.mu.Unlock()
		if !p.write(ctx, k) {
			return false
		}
		p.forget(k)
	}
}

// forget removes k from the outbox.
func (p *Pipeline) forget(k *kept) {
	o := &p.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, it := range o.items {
		if it == k {
			o.items = append(o.items[:i], o.items[i+1:]...)
			return
		}
	}
}

// flushKey waits until the kept records of key's operation, if any, are
// written, before a repeat of it is judged: nil then, or the repeat's
// answer (store_unavailable) when until (on the pipeline's clock) or ctx
// comes first. Only the outbox's writer writes them: a try whose outcome
// is unknown is then always over before the next looks for its row. The
// common case, nothing kept, costs a look under the lock and no timer.
func (p *Pipeline) flushKey(ctx context.Context, key string, until time.Time) *types.Result {
	if key == "" {
		return nil
	}
	o := &p.outbox
	bounded := false
	for {
		var k *kept
		o.mu.Lock()
		for _, it := range o.items {
			if it.key == key {
				k = it
				break
			}
		}
		o.mu.Unlock()
		if k == nil {
			return nil
		}
		if !bounded {
			// Durations, not deadlines: the pipeline's clock may not be
			// the wall's.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, until.Sub(p.clock.Now()))
			defer cancel()
			bounded = true
		}
		select {
		case <-k.done:
		case <-ctx.Done():
			return types.Fail(types.CodeStoreUnavailable, "an earlier call of this operation is not recorded yet, because toolgate's database did not answer; nothing was sent", types.Meta{})
		}
	}
}

// write tries k once: true when its records are in the store now (or can
// never be: logged).
func (p *Pipeline) write(ctx context.Context, k *kept) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.written {
		return true
	}
	if k.written = p.tryWrite(ctx, k); k.written {
		close(k.done)
	}
	return k.written
}

// tryWrite is one try of write, under k.mu. Its commit has no deadline of
// its own (the store's write timeout bounds it): its outcome is known
// when it returns, or unknown because its batch is over, so that the next
// try's look for the row sees what it wrote.
func (p *Pipeline) tryWrite(ctx context.Context, k *kept) bool {
	lctx, cancel := context.WithTimeout(ctx, lookFor)
	defer cancel()
	c := k.c
	e := c.Execution
	if k.fence != nil && c.Operation != nil && !p.fencer.Holds(*k.fence) {
		// Begun under a liveness that lapsed: the operation may be
		// another process's by now; it is left to the takeover.
		c.Operation = nil
	}
	if k.uncertain {
		// The first try's row, if written, finished after the call
		// started (and before this one, built later).
		rows, err := p.store.ListExecutions(lctx, types.ExecutionFilter{RunID: e.RunID, Since: e.StartedAt, Limit: 1000})
		if err != nil {
			return false
		}
		for _, r := range rows {
			if r.CallID == e.CallID {
				return true
			}
		}
	}
	k.uncertain = true
	err := p.store.Commit(context.WithoutCancel(ctx), c)
	switch {
	case err == nil:
		for _, s := range p.sinks {
			s.Record(e)
		}
		p.log.Info("outcome recorded late", "run", e.RunID, "tool", e.Tool, "call", e.CallID, "code", e.Code)
		if k.key != "" {
			p.waiters.notify(k.key)
		}
		return true
	case errors.Is(err, store.ErrStepBudget) && c.TakeStep != nil:
		c.TakeStep = nil // recorded without a step: its answer did nothing
		k.uncertain = false
		return false
	case errors.Is(err, store.ErrNotFound) && c.Operation != nil:
		c.Operation = nil // settled or removed by another process meanwhile
		k.uncertain = false
		return false
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrClosed):
		p.log.Error("an outcome could not be recorded and is dropped", "run", e.RunID, "tool", e.Tool, "call", e.CallID, "code", e.Code, "err", err)
		return true
	}
	p.log.Warn("recording an outcome late failed; trying again", "run", e.RunID, "call", e.CallID, "err", err)
	return false
}

// close stops the writer after a last try of every kept record (within
// closeFlush); records still kept are logged.
func (p *Pipeline) closeOutbox() {
	o := &p.outbox
	o.mu.Lock()
	o.closed = true
	done, stop := o.done, o.stop
	running := o.running
	o.mu.Unlock()
	if running {
		close(stop)
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeFlush)
	defer cancel()
	for ctx.Err() == nil && !p.flushAll(ctx) {
		t := time.NewTimer(retryEvery)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.items {
		e := k.c.Execution
		p.log.Error("an outcome was never recorded: the store did not come back before toolgate stopped", "run", e.RunID, "tool", e.Tool, "call", e.CallID, "code", e.Code, "operation", k.key)
	}
}
