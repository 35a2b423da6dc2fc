package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
)

var _ store.Fencer = (*Store)(nil)

// Fence returns the owner id this store holds its liveness lock under and
// its generation, or an error wrapping store.ErrNotLive when the last
// confirmation is older than LivenessOptions.Bound (the lock connection
// broke, or its pings are late). With liveness disabled it is
// Options.Owner, generation 0.
func (s *Store) Fence() (store.Fence, error) {
	if s.live == nil {
		return store.Fence{Owner: s.opts.Owner}, nil
	}
	return s.live.fence(s.live.now())
}

// Holds reports whether f is still the current generation of this store's
// liveness and was confirmed less than LivenessOptions.Bound ago. A send
// made while it holds reaches the dependency before any other replica can
// take f.Owner's operations over, provided it takes less than
// TakeoverDelay - Bound from the check.
func (s *Store) Holds(f store.Fence) bool {
	if s.live == nil {
		return true
	}
	return s.live.holds(f, s.live.now())
}

// TakeOver tries owner's liveness lock (at most once per Keepalive and
// owner) on a pool connection, releasing it at once if it got it. An owner
// whose lock was free TakeoverDelay ago or more is gone and fenced: its
// started operations are turned into unknown ones (AbandonOwner) and
// TakeOver answers true. This store's current owner id is never taken
// over; its earlier ones are, like any other.
func (s *Store) TakeOver(ctx context.Context, owner string) (bool, error) {
	if s.live == nil {
		return false, nil
	}
	if s.closed.Load() {
		return false, store.ErrClosed
	}
	takeOver, tryLock := s.live.decide(owner, s.live.now())
	if tryLock {
		free, err := s.tryOwnerLock(ctx, owner)
		if err != nil {
			return false, err
		}
		s.live.record(owner, free, s.live.now())
		takeOver, _ = s.live.decide(owner, s.live.now())
	}
	if !takeOver {
		return false, nil
	}
	if _, err := s.AbandonOwner(ctx, owner); err != nil {
		return false, err
	}
	return true, nil
}

// tryOwnerLock reports whether owner's liveness lock is free, taking and
// releasing it on one pool connection (never the lock connection, whose
// session holds this store's own lock).
func (s *Store) tryOwnerLock(ctx context.Context, owner string) (bool, error) {
	key := LivenessLockKey(s.schema, owner)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, s.readErr("probe owner "+owner, err)
	}
	defer conn.Release()
	var free bool
	if err := conn.QueryRow(ctx, probeLockSQL, key).Scan(&free); err != nil {
		return false, s.readErr("probe owner "+owner, err)
	}
	if free {
		var released bool
		if err := conn.QueryRow(context.WithoutCancel(ctx), releaseLockSQL, key).Scan(&released); err != nil || !released {
			// The session must not keep the lock: end it.
			closeQuietly(conn.Conn())
			if err == nil {
				err = errors.New("lock not released")
			}
			return false, s.readErr("probe owner "+owner, err)
		}
	}
	return free, nil
}

// startedOwnersSQL lists the owners of started operations, for the sweep.
const startedOwnersSQL = `SELECT DISTINCT owner FROM operations WHERE status = 'started' LIMIT 1000`

// takeOverGone runs TakeOver for every owner of a started operation, so
// that a dead replica's operations turn unknown even if no call meets
// them: the sweep that first finds an owner's lock free starts its
// fencing delay, a later one takes it over. It returns the owners taken
// over.
func (s *Store) takeOverGone(ctx context.Context) (int, error) {
	if s.live == nil {
		return 0, nil
	}
	rows, err := s.pool.Query(ctx, startedOwnersSQL)
	if err != nil {
		return 0, s.readErr("list owners", err)
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, s.readErr("list owners", err)
	}
	n := 0
	for _, owner := range owners {
		gone, err := s.TakeOver(ctx, owner)
		if err != nil {
			return n, err
		}
		if gone {
			n++
		}
	}
	return n, nil
}
