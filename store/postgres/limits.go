package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

var _ store.Limiter = (*Store)(nil)

// quotaLockClass is the first key of the two-key advisory locks that
// serialise the reservations of one (quota, key) across replicas; the
// two-key space never meets the one-key locks other parts may take.
const quotaLockClass = 7150

const (
	// lockRunSQL serialises the slot's admissions of one run on every
	// replica (the run's row lock, held to the end of the transaction):
	// the conflict check and the take cannot interleave with another's.
	lockRunSQL        = `SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`
	purgeWritersSQL   = `DELETE FROM state_writers WHERE run_id = $1 AND lease_until < $2`
	writerConflictSQL = `SELECT EXISTS (SELECT 1 FROM state_writers WHERE run_id = $1 AND holder <> $2 AND lease_until >= $3
    AND ($4::boolean = false OR shared = false))`
	takeWriterSQL = `INSERT INTO state_writers (run_id, holder, owner, lease_until, shared) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (run_id, holder) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until, shared = excluded.shared`
	releaseWriterSQL  = `DELETE FROM state_writers WHERE run_id = $1 AND holder = $2`
	abandonWritersSQL = `DELETE FROM state_writers WHERE $1::text = '' OR owner = $1::text`
	quotaLockSQL      = `SELECT pg_advisory_xact_lock($1::int4, hashtext($2::text))`

	reserveQuotaSQL    = `INSERT INTO quota_reservations (quota, "key", op_key, amount, at) VALUES ($1, $2, $3, $4, $5)`
	operationStatusSQL = `SELECT status FROM operations WHERE "key" = $1`
	runVersionSQL      = `SELECT version FROM runs WHERE id = $1`
	admitVersionSQL    = `WITH admitted AS (
    UPDATE runs SET step = step + 1, updated_at = $1
    WHERE id = $2 AND (max_steps <= 0 OR step < max_steps)
    RETURNING step, version
)
SELECT (SELECT step FROM admitted), (SELECT version FROM admitted), EXISTS (SELECT 1 FROM runs WHERE id = $2)`
	beginInTxSQL = beginOperationSQL + ` RETURNING 1`
)

// errWriterBusy and errQuotaDenied end an admission's transaction (rolled
// back: nothing written).
var errWriterBusy = errors.New("writer busy")

type quotaDenied struct{ d *store.QuotaDenial }

func (q *quotaDenied) Error() string { return "quota denied" }

// Admit takes the state-writer slot, the quota reservations, the step and
// the operation in one transaction: the slot under the run's row lock
// (check for a conflicting holder, then insert its own row), the
// reservations under a transaction-scoped advisory lock per
// (quota, key), taken in a fixed order so that replicas never deadlock.
// A refused admission rolls back: nothing is written.
func (s *Store) Admit(ctx context.Context, a *store.Admission) (*store.Admitted, error) {
	now, at, opArgs := sqlq.PostgreSQL.AdmitArgs(a, s.opts.Owner, s.opts.Clock)
	claims := sortedClaims(a.Quotas)
	var out *store.Admitted
	err := s.write(ctx, fmt.Sprintf("admit on run %q", a.RunID), func(ctx context.Context, conn *pgxpool.Conn) error {
		out = &store.Admitted{}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		exists, needSlot := false, a.Writer != nil
		if a.Operation != nil {
			var status string
			err = tx.QueryRow(ctx, operationStatusSQL, a.Operation.Key).Scan(&status)
			if exists, needSlot, err = sqlq.SlotNeed(needSlot, status, err, pgx.ErrNoRows); err != nil {
				return err
			}
		}
		if needSlot {
			if err := takeWriterTx(ctx, tx, a.RunID, a.Writer, at); err != nil {
				return err
			}
			out.Writer = true
		}
		if a.Operation != nil && len(claims) > 0 && !exists {
			if d, err := quotaCheckTx(ctx, tx, claims, a.Now); err != nil {
				return err
			} else if d != nil {
				return &quotaDenied{d}
			}
		}
		if err := stepTx(ctx, tx, a, now, out); err != nil {
			return err
		}
		if a.Operation != nil {
			if err := beginReservingTx(ctx, tx, a.Operation.Key, opArgs, claims, at, out); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	})
	var denied *quotaDenied
	switch {
	case errors.As(err, &denied):
		return &store.Admitted{Denied: denied.d}, nil
	case errors.Is(err, errWriterBusy):
		return nil, fmt.Errorf("postgres: admit on run %q: %w", a.RunID, store.ErrWriterBusy)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// sortedClaims is a copy of claims in (quota, key) order: the fixed order
// their advisory locks are taken in, so that replicas never deadlock.
func sortedClaims(claims []store.QuotaClaim) []store.QuotaClaim {
	claims = slices.Clone(claims)
	sort.SliceStable(claims, func(i, j int) bool {
		if claims[i].Quota != claims[j].Quota {
			return claims[i].Quota < claims[j].Quota
		}
		return claims[i].Key < claims[j].Key
	})
	return claims
}

// takeWriterTx locks the run's row and gives w the run's writer slot in tx,
// after purging the claims whose lease ended before at: ErrNotFound without
// the run, errWriterBusy when another holder has the slot.
func takeWriterTx(ctx context.Context, tx pgx.Tx, runID string, w *store.WriterClaim, at int64) error {
	var one int
	if err := tx.QueryRow(ctx, lockRunSQL, runID).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	} else if err != nil {
		return err
	}
	var busy bool
	if err := tx.QueryRow(ctx, writerConflictSQL, runID, w.Holder, at, w.Shared).Scan(&busy); err != nil {
		return err
	}
	if busy {
		return errWriterBusy
	}
	if _, err := tx.Exec(ctx, purgeWritersSQL, runID, at); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, takeWriterSQL, runID, w.Holder, w.Owner, nanos(w.LeaseUntil), w.Shared); err != nil {
		return err
	}
	return nil
}

// stepTx sets out's step and run version in tx: a's step when it has one,
// else the run's next step, taken at now (ErrStepBudget when none is
// left).
func stepTx(ctx context.Context, tx pgx.Tx, a *store.Admission, now int64, out *store.Admitted) error {
	if a.Step > 0 {
		out.Step = a.Step
		return tx.QueryRow(ctx, runVersionSQL, a.RunID).Scan(&out.Version)
	}
	var step, version *int64
	var runExists bool
	if err := tx.QueryRow(ctx, admitVersionSQL, now, a.RunID).Scan(&step, &version, &runExists); err != nil {
		return err
	}
	switch {
	case step == nil && !runExists:
		return store.ErrNotFound
	case step == nil:
		return store.ErrStepBudget
	}
	out.Step, out.Version = *step, *version
	return nil
}

// beginReservingTx begins the operation key in tx unless it exists
// (out.Existing then), and when it began reserves claims for it, at at.
func beginReservingTx(ctx context.Context, tx pgx.Tx, key string, opArgs []any, claims []store.QuotaClaim, at int64, out *store.Admitted) error {
	var one int
	err := tx.QueryRow(ctx, beginInTxSQL, opArgs...).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		existing, err := scanOperation(tx.QueryRow(ctx, selectOperationSQL, key))
		if err != nil {
			return err
		}
		out.Existing = existing
	case err != nil:
		return err
	default:
		out.Began = true
		for _, q := range claims {
			if _, err := tx.Exec(ctx, reserveQuotaSQL, q.Quota, q.Key, key, q.Amount, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// quotaCheckTx locks each claim's (quota, key), in the order given, and
// returns the first claim that would pass its limit, or nil. The locks
// last until the transaction ends, so the sums stay true until the
// reservations are written.
func quotaCheckTx(ctx context.Context, tx pgx.Tx, claims []store.QuotaClaim, now time.Time) (*store.QuotaDenial, error) {
	for _, c := range claims {
		if _, err := tx.Exec(ctx, quotaLockSQL, quotaLockClass, c.Quota+"\x1f"+c.Key); err != nil {
			return nil, err
		}
	}
	sum := func(query string, args []any, dest *int64) error { return tx.QueryRow(ctx, query, args...).Scan(dest) }
	return sqlq.PostgreSQL.CheckQuotas(claims, now, sum, pgx.ErrNoRows)
}

// ReleaseStateWriter clears the run's slot if holder holds it.
func (s *Store) ReleaseStateWriter(ctx context.Context, runID, holder string) error {
	_, err := s.update(ctx, fmt.Sprintf("release state writer of %q", runID), releaseWriterSQL, runID, holder)
	return err
}

// abandonWriters clears the slots of owner (of every owner when "").
func (s *Store) abandonWriters(ctx context.Context, owner string) error {
	_, err := s.update(ctx, fmt.Sprintf("abandon state writers of %q", owner), abandonWritersSQL, owner)
	return err
}

// limitCTEs adds to a commit statement the CTEs that settle limits, each
// only if the run's update did: the slot's release, and the deletion of a
// deleted operation's reservations. key is the operation key's parameter.
func limitCTEs(q *strings.Builder, p *params, c *store.Commit, runID, key string) {
	if u := c.Operation; u != nil && u.Status == "" {
		q.WriteString(`unreserved AS (DELETE FROM quota_reservations WHERE op_key = ` + key + " AND EXISTS (SELECT 1 FROM run)),\n")
	}
	if c.ReleaseWriter != "" {
		q.WriteString("released AS (DELETE FROM state_writers WHERE run_id = " + runID + " AND holder = " +
			p.typed(c.ReleaseWriter, "text") + " AND EXISTS (SELECT 1 FROM run)),\n")
	}
}
