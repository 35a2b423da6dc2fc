package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolgate/toolgate/store"
)

// DefaultReadTimeout is the default of Options.ReadTimeout.
const DefaultReadTimeout = 1500 * time.Millisecond

// idlePing is how long a connection of the writer may sit idle before it
// is pinged ahead of its next batch (as pgxpool pings its own): one reset
// while toolgate was not using it must cost a reconnect, not a batch.
const idlePing = time.Second

// unavailable wraps err with store.ErrUnavailable when it says that the
// database could not be reached or did not answer: a network error, a
// timeout, a connection closed or refused, or the server's own answer that
// it is shutting down, starting up, out of connections or out of disk.
// Every other error (a server's refusal of a statement, a store sentinel)
// is returned as it is.
func unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrClosed) || errors.Is(err, context.Canceled) {
		return err
	}
	if down(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// down reports whether err is one of unavailable's.
func down(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		c := pgErr.Code
		// 08: connection exception; 57P01-03: admin shutdown, crash
		// shutdown, cannot connect now; 53: insufficient resources (disk
		// full, out of memory, too many connections).
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "57P") || strings.HasPrefix(c, "53")
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &netErr) || errors.As(err, &connectErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// bounded returns ctx with a deadline no later than d from now.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// liveRow is the row of readDB.QueryRow, read when it is scanned.
type liveRow struct {
	s     *Store
	ctx   context.Context
	query string
	args  []any
}

// Scan runs the read within Options.ReadTimeout when the liveness is not
// confirmed, else within Options.WriteTimeout (the database answers: a
// slow read is load, not a fault), and cuts it if the liveness is lost
// meanwhile.
func (r *liveRow) Scan(dest ...any) error {
	limit := r.s.opts.ReadTimeout
	if r.s.live != nil && r.s.live.confirmed() {
		limit = max(limit, r.s.opts.WriteTimeout)
	}
	return r.scan(limit, dest)
}

// scan runs the read within limit (and until the liveness is lost).
func (r *liveRow) scan(limit time.Duration, dest []any) error {
	ctx, cancel := bounded(r.ctx, limit)
	defer cancel()
	defer r.s.cutOnLoss(cancel)()
	err := r.s.pool.QueryRow(ctx, r.query, r.args...).Scan(dest...)
	if err != nil && ctx.Err() != nil && r.ctx.Err() == nil {
		// Cut by its bound or by the liveness's loss, not by its caller.
		return fmt.Errorf("%w: no answer in time (%v)", store.ErrUnavailable, err)
	}
	return err
}

// detach is ctx without its cancellation, but with its deadline if it has
// one.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, dl)
	}
	return context.WithCancel(d)
}

// lostSignal tells the writes in flight that the liveness connection
// broke: the path to the database no longer answers (a partition, a
// restart), so they are cut, their outcome unknown, rather than left
// waiting on connections that may never answer nor reset.
type lostSignal struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

// current is the signal for the writes starting now: it is done once the
// liveness is next lost.
func (l *lostSignal) current() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil {
		l.ctx, l.cancel = context.WithCancel(context.Background())
	}
	return l.ctx
}

// fire cuts the writes in flight; later writes get a new signal.
func (l *lostSignal) fire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		l.cancel()
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
}

// cutOnLoss makes cancel run when the liveness is lost; the returned stop
// undoes it.
func (s *Store) cutOnLoss(cancel context.CancelFunc) (stop func() bool) {
	return context.AfterFunc(s.lost.current(), cancel)
}
