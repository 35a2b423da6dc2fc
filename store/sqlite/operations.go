package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
	"github.com/toolgate/toolgate/types"
)

const (
	operationExistsSQL = `SELECT 1 FROM operations WHERE "key" = ?`
	claimOperationSQL  = `UPDATE operations SET status = 'started', owner = ?, lease_until = ?, updated_at = ? WHERE "key" = ? AND status = 'unknown'`
	expireLeasesSQL    = `UPDATE operations SET status = 'unknown', updated_at = ? WHERE status = 'started' AND lease_until < ?`
	abandonOwnerSQL    = `UPDATE operations SET status = 'unknown', updated_at = ? WHERE status = 'started' AND (? = '' OR owner = ?)`
	deleteOperationSQL = `DELETE FROM operations WHERE "key" = ?`
	settleOperationSQL = `UPDATE operations SET status = ?, result = ?, updated_at = ?, completed_at = CASE WHEN ? THEN ? ELSE completed_at END WHERE "key" = ?`
)

// BeginOperation inserts op as started unless its key exists; the primary
// key decides between concurrent callers. An empty Owner is Options.Owner; a
// zero CreatedAt is now and a zero UpdatedAt is CreatedAt. The record is
// durable (committed, fsynced) before BeginOperation returns.
func (s *Store) BeginOperation(ctx context.Context, op *types.Operation) (*types.Operation, bool, error) {
	args := s.beginArgs(op)
	var existing *types.Operation
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) (err error) {
		existing, err = beginIn(ctx, tx, args, op.Key)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: begin operation %q: %w", op.Key, err)
	}
	return existing, existing == nil, nil
}

// AdmitAndBegin takes the run's next step and begins the operation in one
// durable write (store.Admitter). With the step budget spent nothing is
// begun.
func (s *Store) AdmitAndBegin(ctx context.Context, runID string, op *types.Operation) (int64, *types.Operation, bool, error) {
	now := nanos(s.opts.Clock.Now())
	args := s.beginArgs(op)
	var step int64
	var existing *types.Operation
	err := s.w.doAfter(ctx, false, func(ctx context.Context, tx *writeTx) (err error) {
		if step, err = admitIn(ctx, tx, runID, now); err != nil {
			return err
		}
		existing, err = beginIn(ctx, tx, args, op.Key)
		return err
	}, func() { s.runs.stepped(runID, step, fromNanos(now)) })
	if err != nil {
		return 0, nil, false, fmt.Errorf("sqlite: admit and begin %q on run %q: %w", op.Key, runID, err)
	}
	return step, existing, existing == nil, nil
}

// beginArgs are the INSERT's arguments for op.
func (s *Store) beginArgs(op *types.Operation) []any {
	return sqlq.SQLite.BeginArgs(op, s.opts.Owner, s.opts.Clock)
}

// beginIn inserts the operation as started inside a write, or returns the
// record that has its key.
func beginIn(ctx context.Context, tx *writeTx, args []any, key string) (*types.Operation, error) {
	n, err := tx.affected(ctx, queries.BeginOperation, args...)
	if err != nil || n == 1 {
		return nil, err
	}
	return sqlq.ScanOperation(scanFunc(func(dest ...any) error {
		return tx.queryRow(ctx, queries.SelectOperation, []any{key}, dest...)
	}), columns{})
}

// scanFunc is a function with the Scan method of a row.
type scanFunc func(dest ...any) error

// Scan implements sqlq.Row.
func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// ClaimOperation moves an unknown operation back to started under owner.
// It answers store.ErrNotFound when no operation has the key.
func (s *Store) ClaimOperation(ctx context.Context, key, owner string, leaseUntil time.Time) (bool, error) {
	now := nanos(s.opts.Clock.Now())
	var claimed bool
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		n, err := tx.affected(ctx, claimOperationSQL, owner, nanos(leaseUntil), now, key)
		if err != nil {
			return err
		}
		if claimed = n == 1; claimed {
			return nil
		}
		exists, err := tx.exists(ctx, operationExistsSQL, key)
		if err == nil && !exists {
			err = store.ErrNotFound
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: claim operation %q: %w", key, err)
	}
	return claimed, nil
}

// ExpireLeases turns started operations whose lease ended before now (a
// zero lease counts as ended) into unknown ones.
func (s *Store) ExpireLeases(ctx context.Context, now time.Time) (int, error) {
	n, err := s.update(ctx, expireLeasesSQL, nanos(now), nanos(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: expire leases: %w", err)
	}
	return int(n), nil
}

// AbandonOwner turns the started operations of owner (of everyone when
// owner is "") into unknown ones.
func (s *Store) AbandonOwner(ctx context.Context, owner string) (int, error) {
	n, err := s.update(ctx, abandonOwnerSQL, nanos(s.opts.Clock.Now()), owner, owner)
	if err == nil {
		_, err = s.update(ctx, abandonWritersSQL, owner, owner)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: abandon owner %q: %w", owner, err)
	}
	return int(n), nil
}

// update runs one statement as a write and returns the rows it changed.
func (s *Store) update(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) (err error) {
		n, err = tx.affected(ctx, query, args...)
		return err
	})
	return n, err
}

var _ store.Admitter = (*Store)(nil)
