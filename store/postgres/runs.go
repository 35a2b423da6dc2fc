package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
	"github.com/toolgate/toolgate/types"
)

const (
	// admitStepSQL takes the next step and, in the same statement, says
	// whether the run exists, so a refusal needs no second round trip.
	admitStepSQL = `WITH admitted AS (
    UPDATE runs SET step = step + 1, updated_at = $1
    WHERE id = $2 AND (max_steps <= 0 OR step < max_steps)
    RETURNING step
)
SELECT (SELECT step FROM admitted), EXISTS (SELECT 1 FROM runs WHERE id = $2)`
)

// CreateRun inserts the run with Step and Version 0. An InitialState left
// nil is taken from State; a zero CreatedAt is now and a zero UpdatedAt is
// CreatedAt.
func (s *Store) CreateRun(ctx context.Context, run *types.Run) error {
	args, err := sqlq.PostgreSQL.RunArgs(run, s.opts.Clock)
	if err != nil {
		return err
	}
	return s.write(ctx, fmt.Sprintf("create run %q", run.ID), func(ctx context.Context, conn *pgxpool.Conn) error {
		tag, err := conn.Exec(ctx, queries.InsertRun, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrRunExists
		}
		return nil
	})
}

// AdmitStep takes the run's next step number in one UPDATE: the row lock
// orders concurrent admissions, on every replica, so none share a number.
func (s *Store) AdmitStep(ctx context.Context, runID string) (int64, error) {
	now := nanos(s.opts.Clock.Now())
	var step *int64
	err := s.write(ctx, fmt.Sprintf("admit step on run %q", runID), func(ctx context.Context, conn *pgxpool.Conn) error {
		var exists bool
		if err := conn.QueryRow(ctx, admitStepSQL, now, runID).Scan(&step, &exists); err != nil {
			return err
		}
		switch {
		case step != nil:
			return nil
		case !exists:
			return store.ErrNotFound
		default:
			return store.ErrStepBudget
		}
	})
	if err != nil {
		return 0, err
	}
	return *step, nil
}
