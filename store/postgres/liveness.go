package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
)

// Defaults of LivenessOptions.
const (
	// DefaultKeepalive is the default of LivenessOptions.Keepalive.
	DefaultKeepalive = 200 * time.Millisecond
	// DefaultLivenessBound is the default of LivenessOptions.Bound.
	DefaultLivenessBound = 1500 * time.Millisecond
	// DefaultTakeoverDelay is the default of LivenessOptions.TakeoverDelay.
	DefaultTakeoverDelay = 2500 * time.Millisecond
)

// LivenessOptions configure the liveness lock of a store (see the package
// doc, "Liveness and fencing"). Every zero value means the default.
type LivenessOptions struct {
	// Disabled turns the liveness lock off: Fence always answers
	// Options.Owner, Holds always true, TakeOver always false; a dead
	// replica's operations then wait for their leases to end.
	Disabled bool
	// Keepalive is the interval between two pings of the lock connection.
	// Default 200ms.
	Keepalive time.Duration
	// Bound is how long a ping confirms liveness, counted from the moment
	// it was sent; a ping that has not answered within Bound breaks the
	// connection. Default 1.5s.
	Bound time.Duration
	// TakeoverDelay is how long another replica waits, after it found an
	// owner's lock free, before it turns that owner's started operations
	// into unknown ones. It must exceed Bound: the difference is the time
	// allowed between the liveness check before a send and the request
	// reaching the dependency. Default 2.5s.
	TakeoverDelay time.Duration
	// Clock reads the time of every liveness decision (only differences
	// of its readings matter). Default: the wall clock's monotonic
	// readings. Tests set a fake one.
	Clock clock.Clock
}

// withDefaults returns o with every zero value replaced by its default.
func (o LivenessOptions) withDefaults() LivenessOptions {
	if o.Keepalive <= 0 {
		o.Keepalive = DefaultKeepalive
	}
	if o.Bound <= 0 {
		o.Bound = DefaultLivenessBound
	}
	if o.TakeoverDelay <= 0 {
		o.TakeoverDelay = DefaultTakeoverDelay
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return o
}

// check says what is wrong with o (after withDefaults), or nil.
func (o LivenessOptions) check() error {
	switch {
	case o.Disabled:
		return nil
	case o.Bound <= o.Keepalive:
		return fmt.Errorf("liveness bound %s must exceed the keepalive interval %s", o.Bound, o.Keepalive)
	case o.TakeoverDelay <= o.Bound:
		return fmt.Errorf("takeover delay %s must exceed the liveness bound %s", o.TakeoverDelay, o.Bound)
	}
	return nil
}

// LivenessLockKey is the key of the session-level advisory lock
// (pg_advisory_lock(bigint)) that the replica with owner id owner holds in
// schema while it is alive: a 64-bit FNV-1a hash of both.
func LivenessLockKey(schema, owner string) int64 {
	h := fnv.New64a()
	h.Write([]byte("toolgate-liveness\x00"))
	h.Write([]byte(schema))
	h.Write([]byte{0})
	h.Write([]byte(owner))
	return int64(h.Sum64())
}

const (
	acquireLockSQL = `SELECT pg_try_advisory_lock($1), pg_backend_pid()`
	pingSQL        = `SELECT 1`
	probeLockSQL   = `SELECT pg_try_advisory_lock($1)`
	releaseLockSQL = `SELECT pg_advisory_unlock($1)`
	// terminateOldSQL ends this process's previous lock session if the
	// server still holds it (a half-open connection), so that the
	// operations of the old owner id can be taken over at once.
	terminateOldSQL = `SELECT pg_terminate_backend(pid) FROM pg_locks
WHERE locktype = 'advisory' AND pid = $1 AND objsubid = 1 AND classid = $2 AND objid = $3`
)

// liveness holds the store's lock connection and the state derived from
// its pings. Its times are monotonic readings of now.
type liveness struct {
	opts   LivenessOptions
	base   string // Options.Owner: the prefix of every owner id
	schema string
	cfg    *pgx.ConnConfig
	log    *slog.Logger
	now    func() time.Time
	// onLose, when set, is called when a ping fails (the liveness is
	// then lost).
	onLose func()

	stop chan struct{}
	done sync.WaitGroup

	// conn is the lock connection, used by the keepalive goroutine only
	// (and by Open and Close around it).
	conn *pgx.Conn
	// oldPID and oldKey name the previous lock session, to end on the
	// server once a new one holds the lock.
	oldPID int32
	oldKey int64

	mu         sync.Mutex
	gen        uint64
	owner      string
	key        int64
	validUntil time.Time // liveness confirmed until then; zero: not live
	probes     map[string]*probe
}

// probe is what this process knows of another owner's liveness.
type probe struct {
	checked   time.Time // when its lock was last tried
	goneSince time.Time // when its lock was first found free (zero: held)
}

// maxProbes bounds the probe cache; older entries are forgotten first.
const maxProbes = 4096

// newOwnerID makes the owner id of generation gen: the base name, the
// generation and a random part, so that no two processes (nor two
// generations of one) ever share one.
func newOwnerID(base string, gen uint64) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d-%s", base, gen, hex.EncodeToString(b[:]))
}

// livenessSuffix matches what newOwnerID appends to the base name. An
// owner id without it holds no liveness lock (a replica of an earlier
// toolgate, or a store with liveness disabled): its free lock says
// nothing, so it is never taken over; its leases apply.
var livenessSuffix = regexp.MustCompile(`/[0-9]+-[0-9a-f]{8}$`)

// acquire opens a new lock connection and takes the lock of a new owner
// id on it; liveness is confirmed from the moment the statement was sent.
func (l *liveness) acquire(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(l.opts.Bound, 5*time.Second))
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg.Copy())
	if err != nil {
		return err
	}
	l.mu.Lock()
	gen := l.gen + 1
	l.mu.Unlock()
	owner := newOwnerID(l.base, gen)
	key := LivenessLockKey(l.schema, owner)
	sent := l.now()
	var got bool
	var pid int32
	if err := conn.QueryRow(ctx, acquireLockSQL, key).Scan(&got, &pid); err != nil {
		closeQuietly(conn)
		return err
	}
	if !got {
		// Only a hash collision with a live owner id: try another.
		closeQuietly(conn)
		l.mu.Lock()
		l.gen = gen
		l.mu.Unlock()
		return fmt.Errorf("liveness lock of %q is taken", owner)
	}
	if l.oldPID != 0 {
		if _, err := conn.Exec(ctx, terminateOldSQL, l.oldPID, uint32(uint64(l.oldKey)>>32), uint32(uint64(l.oldKey))); err != nil {
			l.log.Warn("postgres: could not end the previous liveness session", "pid", l.oldPID, "err", err)
		}
		l.oldPID = 0
	}
	l.conn = conn
	l.mu.Lock()
	l.gen, l.owner, l.key = gen, owner, key
	l.validUntil = sent.Add(l.opts.Bound)
	l.mu.Unlock()
	l.oldPID, l.oldKey = pid, key
	return nil
}

// run pings the lock connection every Keepalive until stop, and replaces
// it (under a new owner id) when a ping fails or does not answer within
// Bound.
func (l *liveness) run() {
	t := time.NewTicker(l.opts.Keepalive)
	defer t.Stop()
	failures := 0 // attempts to re-acquire in a row that failed
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.conn == nil {
			// Bounded: a database that accepts and never answers must not
			// hold the keepalive (nor Close) at the connect.
			ctx, cancel := context.WithTimeout(context.Background(), 2*l.opts.Bound)
			err := l.acquire(ctx)
			cancel()
			if err != nil {
				if failures%50 == 0 { // the first, then every 50th
					l.log.Warn("postgres: liveness lock not re-acquired; writes stay stopped", "attempts", failures+1, "err", err)
				}
				failures++
				continue
			}
			failures = 0
			l.log.Info("postgres: liveness lock re-acquired under a new owner id; writes resume", "owner", l.Owner())
			continue
		}
		l.mu.Lock()
		gen := l.gen
		l.mu.Unlock()
		sent := l.now()
		ctx, cancel := context.WithTimeout(context.Background(), l.opts.Bound)
		_, err := l.conn.Exec(ctx, pingSQL)
		cancel()
		failed := err != nil
		if err == nil && !l.confirm(gen, sent, l.now()) {
			// Fences of this generation failed meanwhile: it ends, so
			// that no operation begun under it stays with a live owner id.
			err = errors.New("the ping answered after liveness had lapsed")
		}
		if err != nil {
			l.lose(err)
		}
		if failed && l.onLose != nil {
			// The database did not answer (not merely late): the writes
			// in flight on other connections wait on that path too.
			l.onLose()
		}
	}
}

// confirm extends liveness to Bound after sent, the moment a ping of
// generation gen that answered at now was sent. It answers false, and
// extends nothing, when liveness had lapsed before now: a fence may have
// failed meanwhile, and the generation must end.
func (l *liveness) confirm(gen uint64, sent, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.gen || !now.Before(l.validUntil) {
		return false
	}
	if until := sent.Add(l.opts.Bound); until.After(l.validUntil) {
		l.validUntil = until
	}
	return true
}

// lose ends the current liveness: no fence of this generation holds from
// now on, and the connection is closed, to be replaced on the next tick.
func (l *liveness) lose(err error) {
	l.mu.Lock()
	l.validUntil = time.Time{}
	owner := l.owner
	l.mu.Unlock()
	l.log.Warn("postgres: liveness lost; writes stop until the lock is re-acquired", "owner", owner, "err", err)
	closeQuietly(l.conn)
	l.conn = nil
}

// confirmed reports whether liveness is confirmed now.
func (l *liveness) confirmed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now().Before(l.validUntil)
}

// Owner is the current owner id.
func (l *liveness) Owner() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owner
}

// fence returns the current fence, or ErrNotLive.
func (l *liveness) fence(now time.Time) (store.Fence, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.validUntil) {
		return store.Fence{}, fmt.Errorf("postgres: %w (owner %s)", store.ErrNotLive, l.owner)
	}
	return store.Fence{Owner: l.owner, Gen: l.gen}, nil
}

// holds reports whether f is the current generation, confirmed at now.
func (l *liveness) holds(f store.Fence, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return f.Gen == l.gen && f.Owner == l.owner && now.Before(l.validUntil)
}

// decide says, before any probe, whether owner is taken over (gone for
// TakeoverDelay), and whether its lock should be tried now (its last try
// is at least Keepalive old). A try it grants is reserved, so that
// concurrent waiters on one owner make one probe.
func (l *liveness) decide(owner string, now time.Time) (takeOver, tryLock bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if owner == l.owner || !livenessSuffix.MatchString(owner) {
		return false, false
	}
	p := l.probes[owner]
	switch {
	case p == nil:
		l.entry(owner).checked = now
		return false, true
	case !p.goneSince.IsZero():
		return now.Sub(p.goneSince) >= l.opts.TakeoverDelay, false
	case now.Sub(p.checked) >= l.opts.Keepalive:
		p.checked = now
		return false, true
	}
	return false, false
}

// entry returns owner's probe, made if missing (l.mu held).
func (l *liveness) entry(owner string) *probe {
	if l.probes == nil {
		l.probes = map[string]*probe{}
	}
	p := l.probes[owner]
	if p == nil {
		if len(l.probes) >= maxProbes {
			l.forgetOldest()
		}
		p = &probe{}
		l.probes[owner] = p
	}
	return p
}

// record notes the result of trying owner's lock; at is a reading taken
// after the answer arrived, so it is later than the end of owner's
// session when free is true.
func (l *liveness) record(owner string, free bool, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.entry(owner)
	p.checked = at
	if free && p.goneSince.IsZero() {
		p.goneSince = at
	}
}

// forgetOldest drops the least recently checked probe.
func (l *liveness) forgetOldest() {
	var oldest string
	var at time.Time
	for owner, p := range l.probes {
		if oldest == "" || p.checked.Before(at) {
			oldest, at = owner, p.checked
		}
	}
	delete(l.probes, oldest)
}

// closeQuietly closes a lock connection without waiting long for a server
// that may be gone; the session ends with the socket.
func closeQuietly(conn *pgx.Conn) {
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = conn.Close(ctx)
}

// startLiveness takes the first liveness lock and starts the keepalive;
// with liveness disabled it does nothing.
func (s *Store) startLiveness(ctx context.Context, cfg *pgx.ConnConfig) error {
	o := s.opts.Liveness.withDefaults()
	if o.Disabled {
		return nil
	}
	if err := o.check(); err != nil {
		return err
	}
	cfg = cfg.Copy()
	if cfg.RuntimeParams["application_name"] == "toolgate" {
		cfg.RuntimeParams["application_name"] = "toolgate-liveness"
	}
	l := &liveness{opts: o, base: s.opts.Owner, schema: s.schema, cfg: cfg, log: s.opts.Logger,
		now: o.Clock.Now, stop: make(chan struct{}), onLose: s.lost.fire}
	if err := l.acquire(ctx); err != nil {
		return fmt.Errorf("liveness lock: %w", err)
	}
	s.live = l
	l.done.Go(l.run)
	return nil
}

// stopLiveness ends the keepalive and closes the lock connection, which
// releases the lock.
func (s *Store) stopLiveness() {
	if s.live == nil {
		return
	}
	close(s.live.stop)
	s.live.done.Wait()
	closeQuietly(s.live.conn)
	s.live.conn = nil
}
