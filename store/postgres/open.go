package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// Defaults of Options.
const (
	// DefaultMaxConns is the default of Options.MaxConns.
	DefaultMaxConns = 16
	// DefaultWriteTimeout is the default of Options.WriteTimeout.
	DefaultWriteTimeout = 30 * time.Second
)

// Options configure Open. Every zero value means the documented default.
type Options struct {
	// Owner names this process in the ledger: BeginOperation records it as
	// the owner of an operation whose Owner is empty. Default: the host
	// name.
	Owner string
	// Clock gives the time for the timestamps a caller leaves zero.
	// Default: the wall clock.
	Clock clock.Clock
	// Schema is the schema that holds toolgate's tables; it is created if
	// missing and becomes every connection's search_path. Default: the
	// search_path of the connection string (usually public).
	Schema string
	// MaxConns caps the pool's connections: the reads and the writes in
	// flight beside the writer's (Commit, AdmitAndBegin), which has 2
	// connections of its own; with the liveness lock's, a store opens up
	// to MaxConns + 3. Default 16.
	MaxConns int32
	// WriteTimeout bounds a write once it holds a connection (the caller's
	// ctx no longer applies then, except that its deadline, when earlier,
	// bounds the write too; see the package doc). Default 30s.
	WriteTimeout time.Duration
	// ReadTimeout bounds a read of one row (a run, an operation) started
	// while the store's liveness is not confirmed, when the caller's ctx
	// allows it longer, so that a database that does not answer costs a
	// caller without a deadline this much at most. While the liveness is
	// confirmed such a read runs within WriteTimeout, and is cut when the
	// liveness's ping fails. Default 1.5s.
	ReadTimeout time.Duration
	// ExpireLeasesEvery, when positive, runs ExpireLeases(now) in the
	// background at that interval until Close, and TakeOver for the owner
	// of every started operation, so that the operations of a dead replica
	// turn unknown even if no call meets them. Default 0: off.
	ExpireLeasesEvery time.Duration
	// Liveness configures the session-level advisory lock this store holds
	// while it is alive, by which other replicas detect its death and it
	// fences itself off (see the package doc). Default: on.
	Liveness LivenessOptions
	// Logger receives the store's few messages (a schema migration, a
	// failed background lease expiry). Default: discarded.
	Logger *slog.Logger

	// hooks let this package's tests observe the writer.
	hooks writerHooks
}

// withDefaults returns o with every zero value replaced by its default.
func (o Options) withDefaults() Options {
	o.Owner, o.Clock, o.Logger = sqlq.Identity(o.Owner, o.Clock, o.Logger)
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	return o
}

var _ store.Store = (*Store)(nil)

// Store is a store.Store in a PostgreSQL database, shareable by several
// processes. Open it with Open; it is safe for concurrent use.
type Store struct {
	opts   Options
	pool   *pgxpool.Pool
	schema string
	closed atomic.Bool
	// live is the liveness lock (nil when disabled).
	live *liveness
	// w packs concurrent commits and admissions into one transaction.
	w *writer
	// lost cuts the writes in flight when the liveness is lost.
	lost lostSignal

	// stop ends the background lease expiry; sweeper waits for it.
	stop    chan struct{}
	sweeper sync.WaitGroup

	reads // the shared read path (sqlq.Reads)
}

// Open connects to the database of url (a postgres:// URL or a key=value
// connection string, as pgx parses it), applies the migrations the schema
// lacks and returns the store. A schema written by a newer toolgate is
// refused with a *SchemaVersionError. ctx bounds the opening only. Open does
// not abandon any started operation (see the package doc).
func Open(ctx context.Context, url string, opts Options) (_ *Store, err error) {
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: keep it out.
		return nil, errors.New("postgres: open: the connection string does not parse")
	}
	cfg.MaxConns = opts.MaxConns
	if opts.hooks.tracer != nil {
		cfg.ConnConfig.Tracer = opts.hooks.tracer
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "toolgate"
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s := &Store{opts: opts, pool: pool, stop: make(chan struct{})}
	s.reads = s.newReads()
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	if s.schema, err = migrate(ctx, pool, opts.Schema, opts.Logger); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err = s.startLiveness(ctx, cfg.ConnConfig); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s.w = newWriter(s, cfg.ConnConfig, opts.hooks)
	if opts.ExpireLeasesEvery > 0 {
		s.sweeper.Go(s.expireLoop)
	}
	return s, nil
}

// Schema is the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// Ping answers nil when the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.readErr("ping", s.pool.Ping(ctx))
}

// Close stops the background lease expiry, waits for the writes in flight
// (the writer runs those already queued) and closes every connection.
// Later calls, Close included, fail with store.ErrClosed.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return store.ErrClosed
	}
	close(s.stop)
	s.sweeper.Wait()
	s.w.close()
	s.stopLiveness()
	s.pool.Close()
	return nil
}

// expireLoop runs ExpireLeases every Options.ExpireLeasesEvery until Close.
func (s *Store) expireLoop() {
	t := time.NewTicker(s.opts.ExpireLeasesEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		// Each sweep is bounded, so that a database that does not answer
		// holds neither the next sweep nor Close.
		ctx, cancel := context.WithTimeout(context.Background(), max(s.opts.ExpireLeasesEvery, s.opts.ReadTimeout))
		n, err := s.ExpireLeases(ctx, s.opts.Clock.Now())
		switch {
		case err != nil && !errors.Is(err, store.ErrClosed):
			s.opts.Logger.Warn("postgres: background lease expiry failed", "err", err)
		case n > 0:
			s.opts.Logger.Info("postgres: leases expired; their operations are now unknown", "operations", n)
		}
		gone, err := s.takeOverGone(ctx)
		cancel()
		switch {
		case err != nil && !errors.Is(err, store.ErrClosed):
			s.opts.Logger.Warn("postgres: background takeover of dead owners failed", "err", err)
		case gone > 0:
			s.opts.Logger.Info("postgres: owners found dead; their operations are now unknown", "owners", gone)
		}
	}
}

// write runs fn, one write, on a connection of its own.
//
// ctx governs admission only: if it ends before a connection is free, write
// returns its error and fn never runs. fn then runs under
// context.WithoutCancel(ctx) bounded by Options.WriteTimeout; if that
// timeout cuts it, the error says the outcome is unknown and is not a
// context error. op names the write in errors.
func (s *Store) write(ctx context.Context, op string, fn func(ctx context.Context, conn *pgxpool.Conn) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.readErr(op, err)
	}
	defer conn.Release()
	limit := s.writeLimit(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	defer s.cutOnLoss(cancel)()
	err = fn(wctx, conn)
	switch {
	case err == nil:
		return nil
	case wctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || conn.Conn().IsClosed()):
		return fmt.Errorf("postgres: %s: %w: no answer within %s; the write's outcome is unknown (%v)", op, store.ErrUnavailable, limit.Round(time.Millisecond), err)
	default:
		return fmt.Errorf("postgres: %s: %w", op, unavailable(err))
	}
}

// writeLimit is how long a write that holds a connection may run:
// Options.WriteTimeout, or less when ctx's deadline is nearer (but never
// less than a millisecond: the write, once started, gets its answer or
// its unknown outcome).
func (s *Store) writeLimit(ctx context.Context) time.Duration {
	limit := s.opts.WriteTimeout
	if dl, ok := ctx.Deadline(); ok {
		limit = max(min(limit, time.Until(dl)), time.Millisecond)
	}
	return limit
}

// readErr wraps the error of a read (or of taking a connection); one that
// lost the race with Close answers store.ErrClosed.
func (s *Store) readErr(op string, err error) error {
	return sqlq.ReadErr("postgres", &s.closed, op, unavailable(err))
}
