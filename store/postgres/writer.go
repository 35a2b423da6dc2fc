package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
)

// maxBatch bounds the requests packed into one transaction.
const maxBatch = 128

// writerConns is the number of the writer's connections, each running
// one batch at a time from one queue: while one batch waits for its
// COMMIT's WAL flush, the next one is sent on the other connection (as
// store/sqlite's writer overlaps its fsync with the next batch), and the
// writes that arrive meanwhile pile up for the batch after it. More
// connections serve a few callers a little sooner but split the same
// writes into more, smaller transactions, and PostgreSQL's CPU is per
// transaction and its WAL flush more than per write: in
// BenchmarkCallSequence on 2 shared cores, 2 connections against 8 cost
// about 40% less PostgreSQL CPU per call at 8 and 64 callers, for as many
// calls/s at 64 callers and about 10% fewer at 8 (docs/scaling.md).
const writerConns = 2

// A request's life: queued by its caller, then either taken into a batch
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
	// deadline is the caller's (zero: none): the batch that takes the
	// request runs until the latest deadline of its requests, within
	// Options.WriteTimeout.
	deadline time.Time
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
	// taken, when set, is called by the leader of each batch once it
	// holds a connection, before it takes the queued requests.
	taken func()
	// tracer, when set, traces every connection of the store (the
	// benchmark counts round trips with it).
	tracer pgx.QueryTracer
	// conns, when not 0, replaces writerConns.
	conns int
}

// writer is the store's writer: the queue of write requests and
// writerConns connections. A caller that queued a request and finds a
// connection idle leads the next batch: it takes the queued requests, up
// to maxBatch, packs them into one transaction on that connection and
// commits once (group commit), then answers each caller its own outcome.
// While every connection is busy, requests pile up for the next batch. No
// goroutine of its own: a lone caller runs its write itself, with no
// hand-off to wait for.
type writer struct {
	s     *Store
	hooks writerHooks

	mu     sync.Mutex
	closed bool
	queue  []*request
	// free are the connections no batch is using, the last used on top
	// (so a lone caller keeps using one, and the others stay unopened
	// until calls are concurrent); idle holds a token for each.
	free []*connHolder
	idle chan struct{}
	n    int

	batches, ran, rollbacks atomic.Uint64
}

// newWriter returns the writer of s, whose connections connect with cfg.
func newWriter(s *Store, cfg *pgx.ConnConfig, h writerHooks) *writer {
	cfg = cfg.Copy()
	if cfg.RuntimeParams["application_name"] == "toolgate" {
		cfg.RuntimeParams["application_name"] = "toolgate-writer"
	}
	n := h.conns
	if n <= 0 {
		n = writerConns
	}
	w := &writer{s: s, hooks: h, idle: make(chan struct{}, n), n: n}
	for range n {
		w.free = append(w.free, &connHolder{cfg: cfg})
		w.idle <- struct{}{}
	}
	return w
}

// do queues r and waits for its outcome, wrapped with r.op, leading
// batches while r is queued and a connection is idle.
//
// ctx governs admission only, as in Store.write: if ctx ends before a
// batch takes r, do returns ctx's error and r never runs. Once taken, r
// runs and do waits for its transaction's end (bounded by
// Options.WriteTimeout) and returns the true outcome even if ctx has ended
// meanwhile; so does a batch that do leads. A batch runs no longer than
// the earliest deadline of its callers (batchLimit): a caller whose ctx
// has a deadline waits no longer than that, and is answered, when the
// batch is cut, that the write's outcome is unknown (store.ErrUnavailable).
func (w *writer) do(ctx context.Context, r *request) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %s: %w", r.op, err)
	}
	r.deadline, _ = ctx.Deadline()
	r.done = make(chan error, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return store.ErrClosed
	}
	w.queue = append(w.queue, r)
	w.mu.Unlock()
	if w.hooks.enqueued != nil {
		w.hooks.enqueued()
	}
	for {
		select {
		case err := <-r.done:
			return err
		case <-w.idle:
			if r.state.Load() != requestQueued {
				// Taken into another's batch, which answers it.
				w.idle <- struct{}{}
				return <-r.done
			}
			h := w.pop()
			w.lead(h)
			w.push(h)
			w.idle <- struct{}{}
		case <-ctx.Done():
			if r.state.CompareAndSwap(requestQueued, requestAbandoned) {
				return fmt.Errorf("postgres: %s: %w", r.op, unavailable(ctx.Err()))
			}
			return <-r.done
		}
	}
}

// pop takes the free connection on top (the caller holds a token).
func (w *writer) pop() *connHolder {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.free[len(w.free)-1]
	w.free = w.free[:len(w.free)-1]
	return h
}

// push gives h back, on top.
func (w *writer) push(h *connHolder) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.free = append(w.free, h)
}

// lead takes the queued requests, up to maxBatch (leaving out those whose
// callers abandoned them), and runs them as one batch on h.
func (w *writer) lead(h *connHolder) {
	if w.hooks.taken != nil {
		w.hooks.taken()
	}
	w.mu.Lock()
	reqs := make([]*request, 0, min(len(w.queue), maxBatch))
	n := 0
	for ; n < len(w.queue) && len(reqs) < maxBatch; n++ {
		if r := w.queue[n]; r.state.CompareAndSwap(requestQueued, requestTaken) {
			reqs = append(reqs, r)
		}
	}
	rest := copy(w.queue, w.queue[n:])
	clear(w.queue[rest:])
	w.queue = w.queue[:rest]
	w.mu.Unlock()
	if len(reqs) > 0 {
		w.runBatch(h, reqs)
	}
}

// close stops taking requests, waits for the batches in flight, runs
// those still queued and closes the connections. Later calls of do get
// ErrClosed.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	for range w.n {
		<-w.idle
	}
	for {
		w.mu.Lock()
		empty := len(w.queue) == 0
		w.mu.Unlock()
		if empty {
			break
		}
		h := w.pop()
		w.lead(h)
		w.push(h)
	}
	for _, h := range w.free {
		h.release()
	}
}

// stats returns the writer's counters.
func (w *writer) stats() WriterStats {
	return WriterStats{Batches: w.batches.Load(), Requests: w.ran.Load(), Rollbacks: w.rollbacks.Load()}
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
