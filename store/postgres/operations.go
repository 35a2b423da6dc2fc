package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
	"github.com/toolgate/toolgate/types"
)

const (
	// operationColumns, beginOperationSQL and selectOperationSQL are the
	// shared statements (sqlq), named for this store's statements that
	// extend them.
	operationColumns   = sqlq.OperationColumns
	beginOperationSQL  = sqlq.BeginOperationSQL
	selectOperationSQL = sqlq.SelectOperationSQL
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
)

// scanOperation reads one operation row (sqlq.ScanOperation).
func scanOperation(row pgx.Row) (*types.Operation, error) { return sqlq.ScanOperation(row, columns{}) }

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

// beginArgs are the INSERT's arguments for op.
func (s *Store) beginArgs(op *types.Operation) []any {
	return sqlq.PostgreSQL.BeginArgs(op, s.opts.Owner, s.opts.Clock)
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
