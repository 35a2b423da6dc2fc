package sqlite

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/sqlq"
	"github.com/toolgate/toolgate/types"
)

const (
	admitStepSQL = `UPDATE runs SET step = step + 1, updated_at = ?
WHERE id = ? AND (max_steps <= 0 OR step < max_steps)`
	runStepSQL   = `SELECT step FROM runs WHERE id = ?`
	runExistsSQL = `SELECT 1 FROM runs WHERE id = ?`
)

// CreateRun inserts the run with Step and Version 0. An InitialState left
// nil is taken from State; a zero CreatedAt is now and a zero UpdatedAt is
// CreatedAt.
func (s *Store) CreateRun(ctx context.Context, run *types.Run) error {
	args, err := sqlq.SQLite.RunArgs(run, s.opts.Clock)
	if err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		n, err := tx.affected(ctx, queries.InsertRun, args...)
		if err != nil {
			return fmt.Errorf("sqlite: create run %q: %w", run.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: create run %q: %w", run.ID, store.ErrRunExists)
		}
		return nil
	})
}

// GetRun reads the run, or answers store.ErrNotFound. A run this process
// has read or written lately comes from the run cache (see runCache).
func (s *Store) GetRun(ctx context.Context, id string) (*types.Run, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	cached, epoch := s.runs.get(id)
	if cached != nil {
		return cached, nil
	}
	run, err := s.reads.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	s.runs.fill(run, epoch)
	return run, nil
}

// AdmitStep takes the run's next step number in one UPDATE, so that
// concurrent admissions never share a number.
func (s *Store) AdmitStep(ctx context.Context, runID string) (int64, error) {
	now := nanos(s.opts.Clock.Now())
	var step int64
	// A step number is no effect: losing the last ones to a power loss
	// leaves a gap, never a wrong record.
	err := s.w.doAfter(ctx, true, func(ctx context.Context, tx *writeTx) (err error) {
		step, err = admitIn(ctx, tx, runID, now)
		return err
	}, func() { s.runs.stepped(runID, step, fromNanos(now)) })
	if err != nil {
		return 0, fmt.Errorf("sqlite: admit step on run %q: %w", runID, err)
	}
	return step, nil
}

// admitIn takes the run's next step inside a write: an UPDATE, then a
// SELECT of the step, cheaper than UPDATE ... RETURNING (see bumpVersion).
func admitIn(ctx context.Context, tx *writeTx, runID string, now int64) (int64, error) {
	n, err := tx.affected(ctx, admitStepSQL, now, runID)
	if err != nil {
		return 0, err
	}
	if n == 1 {
		var step int64
		err := tx.queryRow(ctx, runStepSQL, []any{runID}, &step)
		return step, err
	}
	return 0, stepRefused(ctx, tx, runID)
}

// stepRefused says why a step could not be taken: the run does not exist
// (store.ErrNotFound), or its max_steps are all taken (store.ErrStepBudget).
func stepRefused(ctx context.Context, tx *writeTx, runID string) error {
	exists, err := tx.exists(ctx, runExistsSQL, runID)
	switch {
	case err != nil:
		return err
	case !exists:
		return store.ErrNotFound
	default:
		return store.ErrStepBudget
	}
}
