package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolgate/toolgate/store"
)

// connHolder is the writer's connection, outside the pool (the pool's
// connections stay for reads and the writes that are not batched): opened
// by the first batch, kept from one batch to the next, and replaced once
// it broke.
type connHolder struct {
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	// used is when the connection last ended a batch.
	used time.Time
}

// get returns the connection, opening one when there is none. One that
// sat idle for idlePing is pinged first, and replaced if the ping fails:
// the database may have restarted, or the network reset it, meanwhile.
func (h *connHolder) get(ctx context.Context) (*pgx.Conn, error) {
	if h.conn != nil && !h.conn.IsClosed() && time.Since(h.used) > idlePing {
		if err := h.conn.Ping(ctx); err != nil {
			h.release()
		}
	}
	if h.conn != nil && h.conn.IsClosed() {
		h.release()
	}
	if h.conn == nil {
		conn, err := pgx.ConnectConfig(ctx, h.cfg.Copy())
		if err != nil {
			return nil, err
		}
		h.conn = conn
	}
	h.used = time.Now()
	return h.conn, nil
}

// release closes the connection.
func (h *connHolder) release() {
	closeQuietly(h.conn)
	h.conn = nil
}

// runBatch runs reqs in one transaction on h's connection and answers each; a request whose
// statement failed is set apart and runs alone afterwards, so that its
// failure is its own.
//
// The requests are sorted by run (stably: a run's requests keep their
// order), so that every replica takes the row locks of runs in one order.
func (w *writer) runBatch(h *connHolder, reqs []*request) {
	slices.SortStableFunc(reqs, func(a, b *request) int { return strings.Compare(a.runID, b.runID) })
	ctx, cancel := context.WithTimeout(context.Background(), batchLimit(reqs, w.s.opts.WriteTimeout))
	defer cancel()
	defer w.s.cutOnLoss(cancel)()
	defer func() { h.used = time.Now() }()
	w.ran.Add(uint64(len(reqs)))
	alone := w.tryBatch(ctx, h, reqs)
	for i, r := range alone {
		if ctx.Err() != nil {
			w.fail(ctx, alone[i:], ctx.Err())
			return
		}
		w.tryBatch(ctx, h, []*request{r})
	}
}

// batchLimit is how long a batch of reqs may run: until the earliest of
// their callers' deadlines, and never longer than limit,
// Options.WriteTimeout. So every caller waits for its batch's end, and
// gets its true outcome (or an unknown one, once the batch is over),
// within its own deadline. A batch cut so leaves its callers with an
// unknown outcome only when the database did not answer in time anyway.
func batchLimit(reqs []*request, limit time.Duration) time.Duration {
	for _, r := range reqs {
		if !r.deadline.IsZero() {
			limit = min(limit, time.Until(r.deadline))
		}
	}
	return max(limit, time.Millisecond)
}

// tryBatch sends reqs as one transaction until it commits, setting apart
// the request whose statement failed (after two failures, every request).
// It answers the requests it committed, or all of them when the
// connection failed, and returns those set apart. A single request is
// always answered: its failure is its outcome.
func (w *writer) tryBatch(ctx context.Context, h *connHolder, reqs []*request) (alone []*request) {
	retried := false
	for attempt := 0; len(reqs) > 0; attempt++ {
		conn, err := h.get(ctx)
		if err != nil {
			w.fail(ctx, reqs, err)
			return alone
		}
		w.batches.Add(1)
		culprit, err := send(ctx, conn, reqs)
		if err == nil {
			answer(reqs, nil)
			return alone
		}
		if conn.IsClosed() && ctx.Err() == nil && pgconn.SafeToRetry(err) && !retried {
			// Broken before anything was sent (a reset the idle ping did
			// not catch): send it again on a new connection, once.
			h.release()
			retried = true
			attempt--
			continue
		}
		if conn.IsClosed() || ctx.Err() != nil {
			h.release()
			w.fail(ctx, append(reqs, alone...), err)
			return nil
		}
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
			h.release()
			w.fail(ctx, append(reqs, alone...), err)
			return nil
		}
		w.rollbacks.Add(1)
		switch {
		case len(reqs) == 1:
			r := reqs[0]
			r.outcome = err
			if errors.Is(err, errAlone) {
				r.outcome = errCommitRefused
			}
			answer(reqs, nil)
			return alone
		case culprit < 0 || attempt >= 1:
			return append(alone, reqs...)
		default:
			alone = append(alone, reqs[culprit])
			reqs = slices.Delete(slices.Clone(reqs), culprit, culprit+1)
		}
	}
	return alone
}

// fail answers each of reqs the error of a batch whose connection failed
// (or whose time ran out): its outcome is unknown, as a single write's is
// in Store.write.
func (w *writer) fail(ctx context.Context, reqs []*request, err error) {
	for _, r := range reqs {
		switch {
		case ctx.Err() != nil:
			r.done <- fmt.Errorf("postgres: %s: %w: no answer in time; the write's outcome is unknown (%v)", r.op, store.ErrUnavailable, err)
		case w.s.closed.Load():
			r.done <- fmt.Errorf("postgres: %s: %w (%v)", r.op, errStoreClosing, err)
		default:
			r.done <- fmt.Errorf("postgres: %s: %w", r.op, unavailable(err))
		}
	}
}

// errStoreClosing explains a write whose connection the store's Close cut.
var errStoreClosing = errors.New("the store was closing")

// send runs reqs as one transaction on conn. When every request has one
// round, their statements go in one pipelined batch (one round trip)
// ending in one Sync: PostgreSQL runs them as one implicit transaction,
// committed at the Sync, rolled back whole by an error. When a request has
// two rounds, BEGIN and the statements of round 0 go in a first batch, the
// statements of round 1 and COMMIT in a second. Each request's outcome is
// set once it committed. On failure culprit is the index of the request
// whose statement failed (-1 when none did: BEGIN, COMMIT, the
// connection) and an explicit transaction, if open, is for the caller to
// roll back.
func send(ctx context.Context, conn *pgx.Conn, reqs []*request) (culprit int, err error) {
	rounds := 1
	for _, r := range reqs {
		r.outcome = nil
		rounds = max(rounds, r.rounds)
	}
	explicit := rounds > 1
	counts := make([]int, len(reqs))
	for round := range rounds {
		var b pgx.Batch
		if explicit && round == 0 {
			b.Queue("BEGIN")
		}
		for i, r := range reqs {
			counts[i] = 0
			if round < r.rounds && r.outcome == nil {
				counts[i] = r.queue(round, &b)
			}
		}
		last := round == rounds-1
		if explicit && last {
			b.Queue("COMMIT")
		}
		ends := txEnd{begin: explicit && round == 0, commit: explicit && last, last: last}
		if culprit, err := sendRound(ctx, conn, &b, reqs, counts, round, ends); err != nil {
			return culprit, err
		}
	}
	return -1, nil
}

// txEnd says what a round's batch holds beside the requests' statements:
// BEGIN first, COMMIT last, and whether it ends the transaction (with its
// COMMIT or its Sync).
type txEnd struct{ begin, commit, last bool }

// sendRound sends b and reads its answers: BEGIN's, each request's with a
// count, COMMIT's, as ends says.
func sendRound(ctx context.Context, conn *pgx.Conn, b *pgx.Batch, reqs []*request, counts []int, round int, ends txEnd) (int, error) {
	br := conn.SendBatch(ctx, b)
	fail := func(culprit int, err error) (int, error) {
		_ = br.Close()
		return culprit, err
	}
	if ends.begin {
		if _, err := br.Exec(); err != nil {
			return fail(-1, err)
		}
	}
	for i, r := range reqs {
		if counts[i] == 0 {
			continue
		}
		outcome, err := readSafely(r, round, br)
		var pgErr *pgconn.PgError
		switch {
		case err != nil && ends.last && !errors.As(err, &pgErr):
			// Not the server's: the end of the transaction, sent
			// already, is not stopped by it. Read on; the
			// transaction's fate is its end's, and this request's
			// outcome its own failure.
			outcome = err
		case err != nil:
			return fail(i, err)
		}
		r.outcome = outcome
	}
	if ends.commit {
		if _, err := br.Exec(); err != nil {
			return fail(-1, err)
		}
	}
	if err := br.Close(); err != nil {
		return -1, err
	}
	return -1, nil
}

// readSafely runs r.read and turns a panic (in a caller's TakeStep) into
// the request's failure, so that one bad write cannot kill the batch's
// leader and leave every caller of the batch waiting.
func readSafely(r *request, round int, br pgx.BatchResults) (outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("postgres: write panicked: %v", p)
		}
	}()
	return r.read(round, br)
}
