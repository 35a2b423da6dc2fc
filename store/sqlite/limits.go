package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
)

var _ store.Limiter = (*Store)(nil)

const (
	operationStatusSQL = `SELECT status FROM operations WHERE "key" = ?`
	writerConflictSQL  = `SELECT 1 FROM state_writers WHERE run_id = ? AND holder <> ? AND lease_until >= ? AND (? = 0 OR shared = 0) LIMIT 1`
	takeWriterSQL      = `INSERT INTO state_writers (run_id, holder, owner, lease_until, shared) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run_id, holder) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until, shared = excluded.shared`
	purgeWritersSQL   = `DELETE FROM state_writers WHERE run_id = ? AND lease_until < ?`
	releaseWriterSQL  = `DELETE FROM state_writers WHERE run_id = ? AND holder = ?`
	abandonWritersSQL = `DELETE FROM state_writers WHERE ? = '' OR owner = ?`

	reserveQuotaSQL  = `INSERT INTO quota_reservations (quota, "key", op_key, amount, at) VALUES (?, ?, ?, ?, ?)`
	releaseQuotasSQL = `DELETE FROM quota_reservations WHERE op_key = ?`
)

// Admit takes the step, the state-writer slot, the operation and its
// quota reservations in one request of the single writer, which
// serialises every admission: the checks (slot free, quota room) and the
// writes cannot interleave with another's. The checks come first, so a
// refused admission writes nothing.
func (s *Store) Admit(ctx context.Context, a *store.Admission) (*store.Admitted, error) {
	w := &admitWrite{a: a}
	w.now, w.at, w.opArgs = sqlq.SQLite.AdmitArgs(a, s.opts.Owner, s.opts.Clock)
	err := s.w.doAfter(ctx, false, w.apply, func() {
		if w.out != nil && w.out.Step > 0 && a.Step == 0 {
			s.runs.stepped(a.RunID, w.out.Step, fromNanos(w.now))
		}
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("sqlite: admit on run %q: %w", a.RunID, err)
	case w.busy:
		return nil, fmt.Errorf("sqlite: admit on run %q: %w", a.RunID, store.ErrWriterBusy)
	}
	return w.out, nil
}

// admitWrite is one Admit on its way through the writer: the admission,
// its arguments encoded in the caller's goroutine, and what the
// transaction decided.
type admitWrite struct {
	a       *store.Admission
	now, at int64
	opArgs  []any

	out  *store.Admitted
	busy bool // the state-writer slot is another's
}

// apply runs in the writer's transaction: the checks, then (when they
// pass) the writes. The writer may run it again: it starts afresh.
func (w *admitWrite) apply(ctx context.Context, tx *writeTx) error {
	w.out, w.busy = &store.Admitted{}, false
	needSlot, err := w.check(ctx, tx)
	if err != nil || w.busy || w.out.Denied != nil {
		return err
	}
	return w.write(ctx, tx, needSlot)
}

// check finds whether the admission needs the state-writer slot (not for
// an operation already begun), whether the slot is another's (w.busy) and,
// for a new operation, whether its quotas have room (w.out.Denied).
func (w *admitWrite) check(ctx context.Context, tx *writeTx) (needSlot bool, err error) {
	a := w.a
	exists, needSlot := false, a.Writer != nil
	if a.Operation != nil {
		var status string
		err = tx.queryRow(ctx, operationStatusSQL, []any{a.Operation.Key}, &status)
		if exists, needSlot, err = sqlq.SlotNeed(needSlot, status, err, sql.ErrNoRows); err != nil {
			return false, err
		}
	}
	if needSlot {
		if w.busy, err = tx.exists(ctx, writerConflictSQL, a.RunID, a.Writer.Holder, w.at, a.Writer.Shared); err != nil || w.busy {
			return false, err
		}
	}
	if a.Operation != nil && len(a.Quotas) > 0 && !exists {
		if w.out.Denied, err = quotaCheckIn(ctx, tx, a.Quotas, a.Now); err != nil {
			return false, err
		}
	}
	return needSlot, nil
}

// write takes the step (unless the admission brings one), reads the run's
// version, begins the operation with its quota reservations, and takes
// the state-writer slot when needSlot.
func (w *admitWrite) write(ctx context.Context, tx *writeTx, needSlot bool) error {
	a, out := w.a, w.out
	out.Step = a.Step
	if a.Step == 0 {
		var err error
		if out.Step, err = admitIn(ctx, tx, a.RunID, w.now); err != nil {
			return err
		}
	}
	if err := tx.queryRow(ctx, runVersionSQL, []any{a.RunID}, &out.Version); err != nil {
		return err
	}
	if a.Operation != nil {
		if err := beginReservingIn(ctx, tx, a, w.opArgs, w.at, out); err != nil {
			return err
		}
	}
	if needSlot {
		out.Writer = true
		if err := takeWriterIn(ctx, tx, a, w.at); err != nil {
			return err
		}
	}
	return nil
}

// beginReservingIn begins a's operation in tx unless it exists (out.Existing
// then), and when it began reserves a's quotas for it, at at.
func beginReservingIn(ctx context.Context, tx *writeTx, a *store.Admission, opArgs []any, at int64, out *store.Admitted) (err error) {
	if out.Existing, err = beginIn(ctx, tx, opArgs, a.Operation.Key); err != nil {
		return err
	}
	out.Began = out.Existing == nil
	if out.Began {
		for _, q := range a.Quotas {
			if _, err := tx.exec(ctx, reserveQuotaSQL, q.Quota, q.Key, a.Operation.Key, q.Amount, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// takeWriterIn gives a.Writer the run's writer slot in tx, after purging
// the claims whose lease ended before at.
func takeWriterIn(ctx context.Context, tx *writeTx, a *store.Admission, at int64) error {
	if _, err := tx.exec(ctx, purgeWritersSQL, a.RunID, at); err != nil {
		return err
	}
	_, err := tx.exec(ctx, takeWriterSQL, a.RunID, a.Writer.Holder, a.Writer.Owner, nanos(a.Writer.LeaseUntil), a.Writer.Shared)
	return err
}

// quotaCheckIn returns the first claim that would pass its limit, or nil.
func quotaCheckIn(ctx context.Context, tx *writeTx, claims []store.QuotaClaim, now time.Time) (*store.QuotaDenial, error) {
	sum := func(query string, args []any, dest *int64) error { return tx.queryRow(ctx, query, args, dest) }
	return sqlq.SQLite.CheckQuotas(claims, now, sum, sql.ErrNoRows)
}

// ReleaseStateWriter clears the run's slot if holder holds it.
func (s *Store) ReleaseStateWriter(ctx context.Context, runID, holder string) error {
	if _, err := s.update(ctx, releaseWriterSQL, runID, holder); err != nil {
		return fmt.Errorf("sqlite: release state writer of %q: %w", runID, err)
	}
	return nil
}

// commitLimitsIn is the part of a Commit that settles limits: the slot is
// released, and a deleted operation's reservations go with it.
func commitLimitsIn(ctx context.Context, tx *writeTx, c *store.Commit) error {
	if c.Operation != nil && c.Operation.Status == "" {
		if _, err := tx.exec(ctx, releaseQuotasSQL, c.Operation.Key); err != nil {
			return err
		}
	}
	if c.ReleaseWriter != "" {
		if _, err := tx.exec(ctx, releaseWriterSQL, c.Execution.RunID, c.ReleaseWriter); err != nil {
			return err
		}
	}
	return nil
}
