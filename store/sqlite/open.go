package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// Defaults of Options.
const (
	// DefaultBusyTimeout is the default of Options.BusyTimeout.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultMaxBatch is the default of Options.MaxBatch.
	DefaultMaxBatch = 256
	// DefaultMaxReadConns is the least default of Options.MaxReadConns.
	DefaultMaxReadConns = 4
)

// Options configure Open. Every zero value means the documented default.
type Options struct {
	// Owner names this process in the ledger: BeginOperation records it as
	// the owner of an operation whose Owner is empty. A process that
	// restarts under the same name can take back its started operations
	// with AbandonOwner. Default: the host name.
	Owner string
	// Clock gives the time for the timestamps a caller leaves zero.
	// Default: the wall clock.
	Clock clock.Clock
	// BusyTimeout is how long a connection waits for a lock held by
	// another process on the same file. Default 5s.
	BusyTimeout time.Duration
	// MaxBatch caps the write requests packed into one transaction (group
	// commit). Default 256.
	MaxBatch int
	// MaxReadConns caps the pool of read connections. Default 4, or
	// GOMAXPROCS when that is larger.
	MaxReadConns int
	// Logger receives the store's few messages (a schema migration, a
	// journal mode other than WAL). Default: discarded.
	Logger *slog.Logger
}

// withDefaults returns o with every zero value replaced by its default.
func (o Options) withDefaults() Options {
	o.Owner, o.Clock, o.Logger = sqlq.Identity(o.Owner, o.Clock, o.Logger)
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxReadConns <= 0 {
		o.MaxReadConns = max(DefaultMaxReadConns, runtime.GOMAXPROCS(0))
	}
	return o
}

var _ store.Store = (*Store)(nil)

// Store is a store.Store in one SQLite file. Writes go through one writer
// goroutine that owns the only write connection (group commit); reads use
// a pool of read connections. Open it with Open; it is safe for concurrent
// use.
type Store struct {
	opts    Options
	writeDB *sql.DB
	w       *writer
	runs    *runCache
	readDB  *sql.DB
	stmts   readStmts // the read connections' cached statements
	reads             // the shared read path (sqlq.Reads)
	closed  atomic.Bool
}

// Open opens (creating it if needed) the database file at path, applies the
// migrations it lacks and starts the writer. A database written by a newer
// toolgate is refused with a *SchemaVersionError. ctx bounds the opening
// only. Open does not abandon the started operations of a previous process:
// call AbandonOwner for that.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	return open(ctx, path, opts, hooks{})
}

// open is Open with test hooks.
func open(ctx context.Context, path string, opts Options, h hooks) (_ *Store, err error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Store{opts: opts}
	s.reads = s.newReads()
	defer func() {
		if err != nil {
			s.closeHandles()
		}
	}()

	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	s.writeDB, err = sql.Open("sqlite", path+"?_pragma=busy_timeout("+busy+")"+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s.writeDB.SetMaxOpenConns(1)
	conn, err := s.writeDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wal, err := checkJournalMode(ctx, conn, opts.Logger)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := migrate(ctx, conn, opts.Logger); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	s.readDB, err = sql.Open("sqlite", path+"?_pragma=busy_timeout("+busy+")&_pragma=query_only(1)")
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s.readDB.SetMaxOpenConns(opts.MaxReadConns)
	s.readDB.SetMaxIdleConns(opts.MaxReadConns)

	var durable *walSync
	if wal && !h.noWALSync {
		if durable, err = walSyncOn(ctx, conn, h.sync); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
	}
	s.w = newWriter(conn, opts.MaxBatch, durable, h)
	s.runs = newRunCache()
	s.w.checked = s.runs.checked
	s.w.start()
	return s, nil
}

// walSyncOn sets the write connection to commit without an fsync
// (synchronous=NORMAL) and returns the fsyncer that makes its commits
// durable instead (see walSync). Without it, the connection stays at
// synchronous=FULL, an fsync in every COMMIT.
func walSyncOn(ctx context.Context, conn *sql.Conn, hook func(*os.File) error) (*walSync, error) {
	durable, err := openWALSync(ctx, conn, hook)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
		durable.close()
		return nil, err
	}
	return durable, nil
}

// checkPath refuses what cannot be one shared file: the writer and the
// readers open it separately.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("sqlite: open: empty path")
	case path == ":memory:" || strings.Contains(path, "mode=memory"):
		return errors.New("sqlite: open: an in-memory database cannot be shared by the writer and the readers; use store/memory")
	case strings.Contains(path, "?"):
		return fmt.Errorf("sqlite: open %q: the path may not contain '?'", path)
	}
	return nil
}

// checkJournalMode reports whether the file is in WAL mode, and logs when
// it could not be put in it (some network file systems): the store still
// works, but readers then wait for the writer, and every COMMIT fsyncs.
func checkJournalMode(ctx context.Context, conn *sql.Conn, log *slog.Logger) (wal bool, err error) {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return false, err
	}
	if !strings.EqualFold(mode, "wal") {
		log.Warn("sqlite: journal mode is not WAL; reads will wait for writes", "journal_mode", mode)
		return false, nil
	}
	return true, nil
}

// Stats returns the counters of the writer goroutine: how many
// transactions it ran for how many write requests.
func (s *Store) Stats() WriterStats { return s.w.stats() }

// Ping answers nil when a read connection answers and writes are being
// taken (not after a failed fsync).
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if s.w.durable != nil {
		// After a failed fsync the store takes no write (see walSync): a
		// health check must say so, so that the process is restarted.
		if err := s.w.durable.failure(); err != nil {
			return fmt.Errorf("sqlite: writes stopped after a failed fsync of the WAL (reopen the store): %w", err)
		}
	}
	return s.readErr("ping", s.readDB.PingContext(ctx))
}

// Close runs the writes already queued, stops the writer and closes the
// file. Later calls, Close included, fail with store.ErrClosed.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return store.ErrClosed
	}
	s.w.close()
	return s.closeHandles()
}

// closeHandles closes the read pool and then the write connection: the last
// connection to close checkpoints the WAL into the main file.
func (s *Store) closeHandles() error {
	var errs []error
	s.stmts.close()
	if s.readDB != nil {
		errs = append(errs, s.readDB.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.tx.conn.Close())
	}
	if s.writeDB != nil {
		errs = append(errs, s.writeDB.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// readErr wraps the error of a read; a read that lost the race with Close
// answers store.ErrClosed.
func (s *Store) readErr(op string, err error) error {
	return sqlq.ReadErr("sqlite", &s.closed, op, err)
}
