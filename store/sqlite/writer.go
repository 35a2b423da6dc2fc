package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// request is one write: apply runs inside its own savepoint of a batch
// transaction, and done carries the outcome once that transaction is
// durable.
type request struct {
	state atomic.Int32
	apply func(ctx context.Context, tx *writeTx) error
	done  chan error
	// light marks a write that records no effect (a step admission, the
	// row of a call that changed nothing): see doLight.
	light bool
}

// WriterStats counts the work of the writer goroutine since Open.
type WriterStats struct {
	// Batches is the number of transactions the writer began.
	Batches uint64
	// Requests is the number of write requests it ran (those abandoned
	// before being taken are not counted).
	Requests uint64
	// LightSwitches counts the switches to synchronous=NORMAL for a batch
	// of writes that record no effect.
	LightSwitches uint64
}

// hooks let the tests of this package observe and disturb the writer.
type hooks struct {
	// enqueued, when set, is called after a request is queued.
	enqueued func()
	// beforeCommit, when set, is called before each COMMIT; an error makes
	// the batch roll back and fail as if the COMMIT had failed.
	beforeCommit func() error
}

// writer owns the one write connection. A single goroutine (loop) takes
// the queued requests, packs up to maxBatch of them into one transaction,
// commits once and then answers every caller of the batch: group commit.
type writer struct {
	tx       writeTx
	maxBatch int
	hooks    hooks

	// mu guards closed against a send on the closed requests channel:
	// senders hold it shared, close holds it exclusively.
	mu       sync.RWMutex
	closed   bool
	requests chan *request
	stopped  chan struct{}

	batches, ran, lightBatches atomic.Uint64
	// syncLight is the connection's mode: true after PRAGMA
	// synchronous=NORMAL. Only the writer goroutine touches it.
	syncLight bool
}

// newWriter returns a writer on conn; start runs its goroutine.
func newWriter(conn *sql.Conn, maxBatch int, h hooks) *writer {
	return &writer{
		tx:       writeTx{conn: conn, stmts: make(map[string]*sql.Stmt)},
		maxBatch: maxBatch,
		hooks:    h,
		requests: make(chan *request, maxBatch),
		stopped:  make(chan struct{}),
	}
}

// start runs the writer goroutine until close.
func (w *writer) start() { go w.loop(context.Background()) }

// do queues apply and waits for its outcome.
//
// ctx governs admission only. If ctx ends before the writer takes the
// request, do returns ctx.Err() and apply never runs. Once taken, the
// request runs and do waits for its batch to commit (or fail) and returns
// the true outcome even if ctx has ended meanwhile: an answer of ctx.Err()
// always means "not written", and a write is never left half-known. The
// wait is bounded by one batch transaction.
func (w *writer) do(ctx context.Context, apply func(ctx context.Context, tx *writeTx) error) error {
	return w.submit(ctx, &request{apply: apply, done: make(chan error, 1)})
}

// doLight is do for a write that records no effect in the world: a step
// admission, or the row of a call that changed nothing (a read, a refusal).
// A batch made only of such writes commits with synchronous=NORMAL: it is
// in the WAL, so it survives a crash of the process, and it reaches the
// disk with the next fsync (the next batch holding an effect, or a
// checkpoint). A power loss may lose the last of them; it never loses an
// effect, an operation record or a state change, whose batches commit with
// synchronous=FULL, and the WAL keeps commits in order.
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
		return err
	case <-ctx.Done():
		if req.state.CompareAndSwap(requestQueued, requestAbandoned) {
			return ctx.Err()
		}
		return <-req.done
	}
}

// close stops taking requests, lets the writer run those already queued
// and waits for its goroutine to end. Later calls of do get ErrClosed.
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
	return WriterStats{Batches: w.batches.Load(), Requests: w.ran.Load(), LightSwitches: w.lightBatches.Load()}
}

// loop is the writer goroutine: take one request (waiting for it), then
// whatever else is already queued up to maxBatch, and run them as one
// batch. It ends when the requests channel is closed and drained.
func (w *writer) loop(ctx context.Context) {
	defer close(w.stopped)
	defer w.tx.closeStatements()
	batch := make([]*request, 0, w.maxBatch)
	outcomes := make([]error, w.maxBatch)
	for first := range w.requests {
		batch = w.take(batch[:0], first)
	drain:
		for len(batch) < w.maxBatch {
			select {
			case req, ok := <-w.requests:
				if !ok {
					break drain
				}
				batch = w.take(batch, req)
			default:
				break drain
			}
		}
		if len(batch) > 0 {
			w.runBatch(ctx, batch, outcomes[:len(batch)])
		}
	}
}

// take appends req to batch unless its caller abandoned it.
func (w *writer) take(batch []*request, req *request) []*request {
	if req.state.CompareAndSwap(requestQueued, requestTaken) {
		batch = append(batch, req)
	}
	return batch
}

// runBatch runs batch in one transaction and answers every caller, only
// after the COMMIT returned: each its own outcome, or all the error that
// failed the transaction as a whole.
func (w *writer) runBatch(ctx context.Context, batch []*request, outcomes []error) {
	w.batches.Add(1)
	w.ran.Add(uint64(len(batch)))
	if err := w.runTransaction(ctx, batch, outcomes); err != nil {
		for _, req := range batch {
			req.done <- err
		}
		clear(outcomes)
		return
	}
	for i, req := range batch {
		req.done <- outcomes[i]
		outcomes[i] = nil
	}
}

// runTransaction runs each request in its own savepoint, so that one
// request's failure rolls back that request only, and commits. A batch of
// one request needs no savepoint: its failure rolls back the transaction.
// The error returned fails the whole batch: nothing of it was written.
func (w *writer) runTransaction(ctx context.Context, batch []*request, outcomes []error) error {
	light := true
	for _, req := range batch {
		light = light && req.light
	}
	if err := w.setSync(ctx, light); err != nil {
		return err
	}
	if err := w.begin(ctx); err != nil {
		return err
	}
	if len(batch) == 1 {
		if outcomes[0] = applySafely(ctx, batch[0], &w.tx); outcomes[0] != nil {
			w.rollback(ctx)
			return nil
		}
	} else {
		for i, req := range batch {
			outcome, err := w.runRequest(ctx, req)
			if err != nil {
				w.rollback(ctx)
				return err
			}
			outcomes[i] = outcome
		}
	}
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
	return nil
}

// setSync switches the connection between synchronous=FULL (fsync at
// commit) and NORMAL (no fsync: a batch of light writes only), outside any
// transaction.
func (w *writer) setSync(ctx context.Context, light bool) error {
	if light == w.syncLight {
		return nil
	}
	mode := "PRAGMA synchronous=FULL"
	if light {
		mode = "PRAGMA synchronous=NORMAL"
	}
	if _, err := w.tx.exec(ctx, mode); err != nil {
		return fmt.Errorf("sqlite: %s: %w", mode, err)
	}
	w.syncLight = light
	if light {
		w.lightBatches.Add(1)
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

// writeTx is what a request sees of the write connection: statements that
// run inside the request's savepoint, prepared once and kept.
type writeTx struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// stmt returns the prepared statement of query, preparing it the first time.
func (tx *writeTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := tx.stmts[query]; ok {
		return st, nil
	}
	st, err := tx.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	tx.stmts[query] = st
	return st, nil
}

// exec runs a statement that returns no rows.
func (tx *writeTx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := tx.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// queryRow runs a statement that returns at most one row and scans it;
// sql.ErrNoRows when it returns none.
func (tx *writeTx) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	st, err := tx.stmt(ctx, query)
	if err != nil {
		return err
	}
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}

// exists reports whether query (SELECT 1 ...) finds a row.
func (tx *writeTx) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	err := tx.queryRow(ctx, query, args, &one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// affected returns the rows a statement changed.
func (tx *writeTx) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// closeStatements releases the prepared statements.
func (tx *writeTx) closeStatements() {
	for query, st := range tx.stmts {
		_ = st.Close()
		delete(tx.stmts, query)
	}
}
