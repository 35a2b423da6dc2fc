package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

const (
	insertRunSQL = `INSERT INTO runs (id, owner, principal, state, initial_state, step, version, max_steps, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, 0, 0, $6, $7, $8) ON CONFLICT (id) DO NOTHING`
	selectRunSQL = `SELECT id, owner, principal, state, initial_state, step, version, max_steps, created_at, updated_at
FROM runs WHERE id = $1`
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
	principal, err := json.Marshal(run.Principal)
	if err != nil {
		return fmt.Errorf("postgres: create run %q: principal: %w", run.ID, err)
	}
	initial := run.InitialState
	if initial == nil {
		initial = run.State
	}
	created := run.CreatedAt
	if created.IsZero() {
		created = s.opts.Clock.Now()
	}
	updated := run.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	args := []any{run.ID, run.Owner, string(principal), jsonArg(run.State), jsonArg(initial),
		run.MaxSteps, nanos(created), nanos(updated)}
	return s.write(ctx, fmt.Sprintf("create run %q", run.ID), func(ctx context.Context, conn *pgxpool.Conn) error {
		tag, err := conn.Exec(ctx, insertRunSQL, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrRunExists
		}
		return nil
	})
}

// GetRun reads the run, or answers store.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id string) (*types.Run, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	var run types.Run
	var principal []byte
	var created, updated int64
	err := s.pool.QueryRow(ctx, selectRunSQL, id).Scan(&run.ID, &run.Owner, &principal,
		jsonDest(&run.State), jsonDest(&run.InitialState), &run.Step, &run.Version, &run.MaxSteps,
		&created, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: get run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.readErr(fmt.Sprintf("get run %q", id), err)
	}
	run.CreatedAt, run.UpdatedAt = fromNanos(created), fromNanos(updated)
	if err := decodeExact(principal, &run.Principal); err != nil {
		return nil, fmt.Errorf("postgres: get run %q: principal: %w", id, err)
	}
	return &run, nil
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
