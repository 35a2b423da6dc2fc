package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
)

// maxBatch bounds the requests packed into one transaction.
const maxBatch = 128

// writerConns is the number of the writer's goroutines, each with its own
// connection, taking batches from one queue: while one batch waits for
// its COMMIT's WAL flush, the next ones are sent on the other connections
// (as store/sqlite's writer overlaps its fsync with the next batch), and
// up to writerConns callers are served at once, each in a batch of its
// own, when few write (BenchmarkCallSequence compares 1, 2, 4 and 8).
const writerConns = 4

// A request's life: queued by its caller, then either taken by the writer
// (it will run, and its caller waits for the outcome) or abandoned by its
// caller whose ctx ended first (it will never run).
const (
	requestQueued int32 = iota
	requestTaken
	requestAbandoned
)

// errAlone wraps the server error by which a request's statement refused
// what would leave something of it written in the batch (a step taken,
// then the commit refused): a server error aborts the transaction, COMMIT
// included, so the batch is rolled back and sent again without it, and it
// runs in a transaction of its own, which its refusal rolls back.
var errAlone = errors.New("postgres: the request must run alone")

// errCommitRefused is a commit's outcome when its statement wrote nothing
// (missing run or operation, version conflict): commitRefused says which.
var errCommitRefused = errors.New("postgres: commit refused")

// request is one write that the writer packs with others into one
// transaction, sent as pipelined batches: one round trip, or two for a
// request whose second statement depends on the answer to its first.
type request struct {
	state atomic.Int32
	// op names the write in errors.
	op string
	// runID orders the requests of a batch, so that the row locks of runs
	// are taken in one order by every replica.
	runID string
	// rounds is 2 when the request's statements of round 1 depend on the
	// answers to those of round 0; else 1.
	rounds int
	// queue adds the request's statements of round (0 or 1) to b and
	// returns how many it added.
	queue func(round int, b *pgx.Batch) int
	// read reads the answers to those statements, in order, and keeps the
	// request's results. A refusal that wrote nothing (a zero-row answer)
	// is its outcome; err fails the batch: a server error, or errAlone.
	// read may run more than once (the batch is sent again): the last run
	// is the one committed.
	read func(round int, br pgx.BatchResults) (outcome, err error)
	// outcome is the request's own answer, kept until its batch commits.
	outcome error
	done    chan error
}

// WriterStats counts the work of the store's writer since Open.
type WriterStats struct {
	// Batches is the number of transactions the writer sent (a batch sent
	// again after a failure counts again: see Rollbacks).
	Batches uint64
	// Requests is the number of write requests it ran (those abandoned
	// before being taken are not counted).
	Requests uint64
	// Rollbacks counts the transactions rolled back because a request's
	// statement failed (or was refused after writing part of it): the
	// others are then sent again without it, and it runs alone.
	Rollbacks uint64
}

// writerHooks let the tests of this package observe the writer.
type writerHooks struct {
	// enqueued, when set, is called after a request is queued.
	enqueued func()
	// taken, when set, is called by the writer goroutine after it took the
	// first request of a batch, before it takes the others queued.
	taken func()
	// tracer, when set, traces every connection of the store (the
	// benchmark counts round trips with it).
	tracer pgx.QueryTracer
	// conns, when not 0, replaces writerConns.
	conns int
}

// writer is the store's writer: writerConns goroutines, each of which
// takes the queued write requests, packs up to maxBatch of them into one
// transaction on its own connection and commits once (group commit), then
// answers each caller its own outcome.
type writer struct {
	s     *Store
	hooks writerHooks

	// mu guards closed against a send on the closed requests channel:
	// senders hold it shared, close holds it exclusively.
	mu       sync.RWMutex
	closed   bool
	requests chan *request
	cfg      *pgx.ConnConfig
	loops    sync.WaitGroup

	batches, ran, rollbacks atomic.Uint64
}

// newWriter returns the writer of s, which connects with cfg; start runs
// its goroutine.
func newWriter(s *Store, cfg *pgx.ConnConfig, h writerHooks) *writer {
	cfg = cfg.Copy()
	if cfg.RuntimeParams["application_name"] == "toolgate" {
		cfg.RuntimeParams["application_name"] = "toolgate-writer"
	}
	return &writer{s: s, hooks: h, cfg: cfg, requests: make(chan *request, maxBatch)}
}

// start runs the writer's goroutines until close.
func (w *writer) start() {
	n := w.hooks.conns
	if n <= 0 {
		n = writerConns
	}
	for range n {
		w.loops.Go(func() { w.loop(&connHolder{cfg: w.cfg}) })
	}
}

// do queues r and waits for its outcome, wrapped with r.op.
//
// ctx governs admission only, as in Store.write: if ctx ends before the
// writer takes r, do returns ctx's error and r never runs. Once taken, r
// runs and do waits for its transaction's end (bounded by
// Options.WriteTimeout) and returns the true outcome even if ctx has ended
// meanwhile.
func (w *writer) do(ctx context.Context, r *request) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %s: %w", r.op, err)
	}
	r.done = make(chan error, 1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return store.ErrClosed
	}
	select {
	case w.requests <- r:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return fmt.Errorf("postgres: %s: %w", r.op, ctx.Err())
	}
	if w.hooks.enqueued != nil {
		w.hooks.enqueued()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(requestQueued, requestAbandoned) {
			return fmt.Errorf("postgres: %s: %w", r.op, ctx.Err())
		}
		return <-r.done
	}
}

// close stops taking requests, lets the writer run those already queued,
// waits for its goroutines to end and closes their connections. Later calls
// of do get ErrClosed.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.requests)
	}
	w.mu.Unlock()
	w.loops.Wait()
}

// stats returns the writer's counters.
func (w *writer) stats() WriterStats {
	return WriterStats{Batches: w.batches.Load(), Requests: w.ran.Load(), Rollbacks: w.rollbacks.Load()}
}

// loop is a writer goroutine, on conn: take one request (waiting for it),
// then whatever else is already queued, up to maxBatch, and run them as
// one batch. It ends when the requests channel is closed and drained.
func (w *writer) loop(conn *connHolder) {
	defer conn.release()
	reqs := make([]*request, 0, maxBatch)
	for first := range w.requests {
		if !first.state.CompareAndSwap(requestQueued, requestTaken) {
			continue
		}
		if w.hooks.taken != nil {
			w.hooks.taken()
		}
		reqs = append(reqs[:0], first)
	drain:
		for len(reqs) < maxBatch {
			select {
			case r, ok := <-w.requests:
				if !ok {
					break drain
				}
				if r.state.CompareAndSwap(requestQueued, requestTaken) {
					reqs = append(reqs, r)
				}
			default:
				break drain
			}
		}
		w.runBatch(conn, reqs)
		clear(reqs)
	}
}

// answer gives each request of reqs err, or its own outcome (wrapped with
// its op) when err is nil.
func answer(reqs []*request, err error) {
	for _, r := range reqs {
		switch {
		case err != nil:
			r.done <- err
		case r.outcome != nil:
			r.done <- fmt.Errorf("postgres: %s: %w", r.op, r.outcome)
		default:
			r.done <- nil
		}
	}
}

// WriterStats returns the counters of the store's writer: Requests /
// Batches is the mean number of calls' writes packed into one
// transaction.
func (s *Store) WriterStats() WriterStats { return s.w.stats() }
