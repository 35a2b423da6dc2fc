package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/store"
)

// A request's life: queued by its caller, then either taken by the writer
// (it will run, and its caller waits for the outcome) or abandoned by its
// caller whose ctx ended first (it will never run).
const (
	requestQueued int32 = iota
	requestTaken
	requestAbandoned
)

// request is one write: apply runs inside a batch transaction, and done
// carries the outcome once that transaction is durable. apply may run twice
// (see writer.add): it must have no effect outside the transaction but
// setting its own results.
type request struct {
	state atomic.Int32
	apply func(ctx context.Context, tx *writeTx) error
	done  chan error
	// light marks a write that records no effect (a step admission, the
	// row of a call that changed nothing): see doLight.
	light bool
	// outcome is the request's own answer, kept from its run until its
	// batch is durable.
	outcome error
	// after, when set, runs on the writer goroutine once the request's
	// batch is committed and the request succeeded, in commit order, before
	// any caller of the batch is answered: it keeps the run cache in step.
	after func()
}

// WriterStats counts the work of the writer goroutine since Open.
type WriterStats struct {
	// Batches is the number of batches the writer ran, each in one
	// transaction (two when a failure made it run again: see Reruns).
	Batches uint64
	// Requests is the number of write requests it ran (those abandoned
	// before being taken are not counted).
	Requests uint64
	// Reruns counts the transactions rolled back because a request failed
	// and run again, each request in its own savepoint (see writer.add).
	Reruns uint64
	// LightBatches counts the committed batches of writes that record no
	// effect, answered without waiting for an fsync.
	LightBatches uint64
	// Syncs counts the fsyncs of the WAL that made committed batches
	// durable (see walSync).
	Syncs uint64
}

// hooks let the tests of this package observe and disturb the writer.
type hooks struct {
	// enqueued, when set, is called after a request is queued.
	enqueued func()
	// beforeCommit, when set, is called before each COMMIT; an error makes
	// the batch roll back and fail as if the COMMIT had failed.
	beforeCommit func() error
	// sync, when set, replaces the fsync of the WAL file.
	sync func(f *os.File) error
	// noWALSync, when set, makes the writer commit every batch with
	// synchronous=FULL, as it does when the file is not in WAL mode.
	noWALSync bool
}

// writer owns the one write connection. A single goroutine (loop) takes
// the queued requests, packs up to maxBatch of them into one transaction
// and commits once: group commit. Every caller of the batch is answered
// once it is durable: by walSync after its fsync of the WAL, or by the
// writer itself after a COMMIT that was its own fsync.
type writer struct {
	tx       writeTx
	maxBatch int
	hooks    hooks
	// durable is the fsyncer of the WAL; nil when every COMMIT fsyncs
	// (synchronous=FULL: the file is not in WAL mode).
	durable *walSync

	// mu guards closed against a send on the closed requests channel:
	// senders hold it shared, close holds it exclusively.
	mu       sync.RWMutex
	closed   bool
	requests chan *request
	stopped  chan struct{}

	batches, ran, reruns, lightBatches atomic.Uint64

	// checked, when set, hears at each BEGIN whether another connection
	// wrote to the file since the last one (runCache.checked). Only the
	// writer goroutine touches dataVersion and dataVersionSeen.
	checked         func(foreign bool)
	dataVersion     int64
	dataVersionSeen bool
}

// newWriter returns a writer on conn; start runs its goroutine. durable
// is nil when every COMMIT is to fsync on its own.
func newWriter(conn *sql.Conn, maxBatch int, durable *walSync, h hooks) *writer {
	return &writer{
		tx:       writeTx{conn: conn, stmts: make(map[string]driver.Stmt)},
		maxBatch: maxBatch,
		hooks:    h,
		durable:  durable,
		requests: make(chan *request, maxBatch),
		stopped:  make(chan struct{}),
	}
}

// start runs the writer goroutine (and the fsyncer's) until close.
func (w *writer) start() {
	if w.durable != nil {
		go w.durable.loop()
	}
	go w.loop(context.Background())
}

// doAfter queues apply and waits for its outcome; light is doLight's,
// after is request.after.
//
// ctx governs admission only. If ctx ends before the writer takes the
// request, doAfter returns ctx.Err() and apply never runs. Once taken, the
// request runs and doAfter waits for its batch to be durable (or to fail) and
// returns the true outcome even if ctx has ended meanwhile: an answer of
// ctx.Err() always means "not written", and a write is never left
// half-known. The wait is bounded: one batch transaction, which may wait
// for the fsync before it, and its own fsync.
func (w *writer) doAfter(ctx context.Context, light bool, apply func(ctx context.Context, tx *writeTx) error, after func()) error {
	return w.submit(ctx, &request{apply: apply, done: make(chan error, 1), light: light, after: after})
}

// do is doAfter with nothing after, for a write that records an effect.
func (w *writer) do(ctx context.Context, apply func(ctx context.Context, tx *writeTx) error) error {
	return w.submit(ctx, &request{apply: apply, done: make(chan error, 1)})
}

// doLight is do for a write that records no effect in the world: a step
// admission, or the row of a call that changed nothing (a read, a refusal).
// A batch made only of such writes is answered as soon as it is committed,
// without waiting for an fsync: it is in the WAL, so it survives a crash of
// the process, and it reaches the disk with the next fsync (that of the
// next batch holding an effect, or a checkpoint's). A power loss may lose
// the last of them; it never loses an effect, an operation record or a
// state change, whose callers are answered only after the fsync, and the
// WAL keeps commits in order.
func (w *writer) doLight(ctx context.Context, apply func(ctx context.Context, tx *writeTx) error) error {
	return w.submit(ctx, &request{apply: apply, done: make(chan error, 1), light: true})
}

func (w *writer) submit(ctx context.Context, req *request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return store.ErrClosed
	}
	select {
	case w.requests <- req:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	if w.hooks.enqueued != nil {
		w.hooks.enqueued()
	}
	select {
	case err := <-req.done:
		return diskFull(err)
	case <-ctx.Done():
		if req.state.CompareAndSwap(requestQueued, requestAbandoned) {
			return ctx.Err()
		}
		return diskFull(<-req.done)
	}
}

// close stops taking requests, lets the writer run those already queued
// and waits for its goroutine to end, and the fsyncer's after it. Later
// calls of do get ErrClosed.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.requests)
	}
	w.mu.Unlock()
	<-w.stopped
}

// stats returns the writer's counters.
func (w *writer) stats() WriterStats {
	st := WriterStats{Batches: w.batches.Load(), Requests: w.ran.Load(), Reruns: w.reruns.Load(),
		LightBatches: w.lightBatches.Load()}
	if w.durable != nil {
		st.Syncs = w.durable.syncs.Load()
	}
	return st
}

// loop is the writer goroutine: take one request (waiting for it), then
// whatever else is already queued up to maxBatch, and run them as one
// batch. It ends when the requests channel is closed and drained, after
// the fsyncer has answered every batch handed to it.
func (w *writer) loop(ctx context.Context) {
	defer close(w.stopped)
	defer w.tx.closeStatements()
	if w.durable != nil {
		defer w.durable.stop()
	}
	b := &batch{reqs: make([]*request, 0, w.maxBatch), inTx: make([]*request, 0, w.maxBatch),
		queued: make([]*request, 0, w.maxBatch)}
	for first := range w.requests {
		if w.take(first) {
			w.runBatch(ctx, b, first)
			clear(b.reqs)
			clear(b.inTx)
			clear(b.queued)
			*b = batch{reqs: b.reqs[:0], inTx: b.inTx[:0], queued: b.queued[:0]}
		}
	}
}

// take reports whether the writer may run req: not when its caller
// abandoned it.
func (w *writer) take(req *request) bool {
	return req.state.CompareAndSwap(requestQueued, requestTaken)
}

// commit ends the batch transaction. A failed COMMIT rolls back: nothing of
// the batch was written.
func (w *writer) commit(ctx context.Context) error {
	if w.hooks.beforeCommit != nil {
		if err := w.hooks.beforeCommit(); err != nil {
			w.rollback(ctx)
			return fmt.Errorf("sqlite: commit: %w", err)
		}
	}
	if _, err := w.tx.exec(ctx, "COMMIT"); err != nil {
		w.rollback(ctx)
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// begin starts the batch transaction. Should a transaction be left open by
// a failed ROLLBACK, it is rolled back and BEGIN is tried once more, so that
// one bad batch cannot fail every later one.
func (w *writer) begin(ctx context.Context) error {
	_, err := w.tx.exec(ctx, "BEGIN IMMEDIATE")
	if err != nil {
		w.rollback(ctx)
		_, err = w.tx.exec(ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	if w.checked != nil {
		// PRAGMA data_version moves when another connection (another
		// process) has committed since the last look: see runCache.
		var v int64
		if err := w.tx.queryRow(ctx, "PRAGMA data_version", nil, &v); err != nil {
			w.rollback(ctx)
			return fmt.Errorf("sqlite: begin: data_version: %w", err)
		}
		w.checked(w.dataVersionSeen && v != w.dataVersion)
		w.dataVersion, w.dataVersionSeen = v, true
	}
	return nil
}

// runRequest runs one request inside a savepoint. outcome is the
// request's own answer (its changes are rolled back when it is an error);
// err means the transaction itself is broken.
func (w *writer) runRequest(ctx context.Context, req *request) (outcome, err error) {
	if _, err := w.tx.exec(ctx, "SAVEPOINT request"); err != nil {
		return nil, fmt.Errorf("sqlite: savepoint: %w", err)
	}
	outcome = applySafely(ctx, req, &w.tx)
	if outcome != nil {
		// A failed ROLLBACK TO means SQLite has already rolled back the
		// whole transaction (disk full, I/O error): the batch is lost.
		if _, err := w.tx.exec(ctx, "ROLLBACK TO request"); err != nil {
			return nil, fmt.Errorf("sqlite: roll back a failed write (%w): %w", outcome, err)
		}
	}
	if _, err := w.tx.exec(ctx, "RELEASE request"); err != nil {
		return nil, fmt.Errorf("sqlite: release savepoint: %w", err)
	}
	return outcome, nil
}

// applySafely runs req.apply and turns a panic into an error, so that a
// bug in one write cannot stop the writer goroutine and hang every caller.
func applySafely(ctx context.Context, req *request, tx *writeTx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlite: write panicked: %v", p)
		}
	}()
	return req.apply(ctx, tx)
}

// rollback ends a failed transaction. Its own error is of no use: the
// transaction may already be gone.
func (w *writer) rollback(ctx context.Context) {
	_, _ = w.tx.exec(ctx, "ROLLBACK")
}
