package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// defaultListLimit is the row count of a list whose limit is 0 or less.
const defaultListLimit = 100

const (
	operationColumns = `"key", args_hash, args, run_id, tool, status, result, owner, lease_until, created_at, updated_at, completed_at`

	beginOperationSQL = `INSERT INTO operations (` + operationColumns + `)
VALUES ($1, $2, $3, $4, $5, 'started', NULL, $6, $7, $8, $9, 0) ON CONFLICT ("key") DO NOTHING`
	selectOperationSQL = `SELECT ` + operationColumns + ` FROM operations WHERE "key" = $1`
	// claimOperationSQL claims and, in the same statement, says whether
	// the key exists at all.
	claimOperationSQL = `WITH claimed AS (
    UPDATE operations SET status = 'started', owner = $1, lease_until = $2, updated_at = $3
    WHERE "key" = $4 AND status = 'unknown'
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM claimed), EXISTS (SELECT 1 FROM operations WHERE "key" = $4)`
	// expireLeasesSQL and abandonOwnerSQL lock their rows in key order
	// first, so that replicas running them at once never deadlock; the
	// outer WHERE checks each row again once it is locked.
	expireLeasesSQL = `UPDATE operations SET status = 'unknown', updated_at = $1
WHERE status = 'started' AND lease_until < $2 AND "key" IN (
    SELECT "key" FROM operations WHERE status = 'started' AND lease_until < $2 ORDER BY "key" FOR UPDATE)`
	abandonOwnerSQL = `UPDATE operations SET status = 'unknown', updated_at = $1
WHERE status = 'started' AND ($2::text = '' OR owner = $2::text) AND "key" IN (
    SELECT "key" FROM operations WHERE status = 'started' AND ($2::text = '' OR owner = $2::text) ORDER BY "key" FOR UPDATE)`
	listOperationsSQL = `SELECT ` + operationColumns + ` FROM operations WHERE status = $1 ORDER BY created_at, seq LIMIT $2`
)

// scanOperation reads one operation row.
func scanOperation(row pgx.Row) (*types.Operation, error) {
	var op types.Operation
	var lease, created, updated, completed int64
	err := row.Scan(&op.Key, &op.ArgsHash, jsonDest(&op.Args), &op.RunID, &op.Tool, &op.Status, jsonDest(&op.Result),
		&op.Owner, &lease, &created, &updated, &completed)
	if err != nil {
		return nil, err
	}
	op.LeaseUntil, op.CreatedAt = fromNanos(lease), fromNanos(created)
	op.UpdatedAt, op.CompletedAt = fromNanos(updated), fromNanos(completed)
	return &op, nil
}

// BeginOperation inserts op as started unless its key exists; the primary
// key decides between concurrent callers, on every replica. An empty Owner
// is Options.Owner; a zero CreatedAt is now and a zero UpdatedAt is
// CreatedAt. The record is committed (in the flushed WAL) before
// BeginOperation returns.
//
// The INSERT ... ON CONFLICT DO NOTHING and the SELECT of the existing
// record go in one round trip (a pgx batch, one implicit transaction); the
// SELECT, a statement of its own under READ COMMITTED, sees the record that
// made the INSERT conflict even if it was committed a moment ago. If that
// record was deleted in between (its operation provably did not happen),
// the pair runs again.
func (s *Store) BeginOperation(ctx context.Context, op *types.Operation) (*types.Operation, bool, error) {
	args := s.beginArgs(op)
	var existing *types.Operation
	err := s.write(ctx, fmt.Sprintf("begin operation %q", op.Key), func(ctx context.Context, conn *pgxpool.Conn) (err error) {
		existing, err = beginOnConn(ctx, conn, args, op.Key)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return existing, existing == nil, nil
}

// beginOnConn inserts the operation as started, or returns the record that
// has its key (nil when it inserted it).
func beginOnConn(ctx context.Context, conn *pgxpool.Conn, args []any, key string) (*types.Operation, error) {
	for {
		var batch pgx.Batch
		batch.Queue(beginOperationSQL, args...)
		batch.Queue(selectOperationSQL, key)
		results := conn.SendBatch(ctx, &batch)
		tag, err := results.Exec()
		var existing *types.Operation
		if err == nil {
			existing, err = scanOperation(results.QueryRow())
		}
		// Close reads up to the end of the implicit transaction: its
		// error is the COMMIT's.
		if cerr := results.Close(); cerr != nil && (err == nil || errors.Is(err, pgx.ErrNoRows)) {
			err = cerr
		}
		switch {
		case err == nil && tag.RowsAffected() == 1:
			return nil, nil // the record read back is our own
		case err == nil:
			return existing, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, err
		}
		// It conflicted, then was gone: deleted in between. Again.
	}
}

// GetOperation reads the operation, or answers store.ErrNotFound.
func (s *Store) GetOperation(ctx context.Context, key string) (*types.Operation, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	op, err := scanOperation(s.pool.QueryRow(ctx, selectOperationSQL, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: get operation %q: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.readErr(fmt.Sprintf("get operation %q", key), err)
	}
	return op, nil
}

// ClaimOperation moves an unknown operation back to started under owner;
// of concurrent claims, on any replica, the row lock lets one through. It
// answers store.ErrNotFound when no operation has the key.
func (s *Store) ClaimOperation(ctx context.Context, key, owner string, leaseUntil time.Time) (bool, error) {
	now := nanos(s.opts.Clock.Now())
	var claimed bool
	err := s.write(ctx, fmt.Sprintf("claim operation %q", key), func(ctx context.Context, conn *pgxpool.Conn) error {
		var exists bool
		if err := conn.QueryRow(ctx, claimOperationSQL, owner, nanos(leaseUntil), now, key).Scan(&claimed, &exists); err != nil {
			return err
		}
		if !exists {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return claimed, nil
}

// ExpireLeases turns started operations whose lease ended before now (a
// zero lease counts as ended) into unknown ones. Replicas may run it at
// the same time: each operation turns once.
func (s *Store) ExpireLeases(ctx context.Context, now time.Time) (int, error) {
	n, err := s.update(ctx, "expire leases", expireLeasesSQL, nanos(now), nanos(now))
	return int(n), err
}

// AbandonOwner turns the started operations of owner (of everyone when
// owner is "") into unknown ones. On a shared database, abandon only an
// owner name that no live replica uses.
func (s *Store) AbandonOwner(ctx context.Context, owner string) (int, error) {
	n, err := s.update(ctx, fmt.Sprintf("abandon owner %q", owner), abandonOwnerSQL, nanos(s.opts.Clock.Now()), owner)
	if err == nil {
		err = s.abandonWriters(ctx, owner)
	}
	return int(n), err
}

// update runs one statement as a write and returns the rows it changed.
func (s *Store) update(ctx context.Context, op, query string, args ...any) (int64, error) {
	var n int64
	err := s.write(ctx, op, func(ctx context.Context, conn *pgxpool.Conn) error {
		tag, err := conn.Exec(ctx, query, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// ListOperations returns the operations in status, oldest (CreatedAt, then
// insertion) first; a limit of 0 or less means 100.
func (s *Store) ListOperations(ctx context.Context, status types.OpStatus, limit int) ([]types.Operation, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if limit <= 0 {
		limit = defaultListLimit
	}
	rows, err := s.pool.Query(ctx, listOperationsSQL, string(status), limit)
	if err != nil {
		return nil, s.readErr("list operations", err)
	}
	defer rows.Close()
	var out []types.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, s.readErr("list operations", err)
		}
		out = append(out, *op)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr("list operations", err)
	}
	return out, nil
}

// beginArgs are the INSERT's arguments for op.
func (s *Store) beginArgs(op *types.Operation) []any {
	owner := op.Owner
	if owner == "" {
		owner = s.opts.Owner
	}
	created := op.CreatedAt
	if created.IsZero() {
		created = s.opts.Clock.Now()
	}
	updated := op.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	return []any{op.Key, op.ArgsHash, jsonArg(op.Args), op.RunID, op.Tool, owner,
		nanos(op.LeaseUntil), nanos(created), nanos(updated)}
}

var _ store.Admitter = (*Store)(nil)

// admitAndBeginSQL admits the step and, only if it was admitted, inserts
// the operation, in one statement (one round trip, one commit). It answers
// the step (NULL when not admitted), whether the run exists and whether the
// operation was inserted.
const admitAndBeginSQL = `WITH admitted AS (
    UPDATE runs SET step = step + 1, updated_at = $10
    WHERE id = $11 AND (max_steps <= 0 OR step < max_steps)
    RETURNING step
), inserted AS (
    INSERT INTO operations (` + operationColumns + `)
    SELECT $1, $2, $3::json, $4, $5, 'started', NULL, $6, $7::bigint, $8::bigint, $9::bigint, 0
    WHERE EXISTS (SELECT 1 FROM admitted)
    ON CONFLICT ("key") DO NOTHING
    RETURNING 1
)
SELECT (SELECT step FROM admitted), EXISTS (SELECT 1 FROM runs WHERE id = $11), EXISTS (SELECT 1 FROM inserted)`

// AdmitAndBegin takes the run's next step and begins the operation in one
// statement, one round trip and one commit (store.Admitter), packed by the
// store's writer with other calls' writes (writeradmit.go). With the step
// budget spent nothing is begun. When the key exists, its record is read
// by a second statement, which sees it committed.
func (s *Store) AdmitAndBegin(ctx context.Context, runID string, op *types.Operation) (int64, *types.Operation, bool, error) {
	return s.admitAndBegin(ctx, runID, op)
}
