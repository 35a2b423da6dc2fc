package sqlq

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/types"
)

// The run statements, in PostgreSQL's form (see Dialect.Bind).
const (
	insertRunSQL = `INSERT INTO runs (id, owner, principal, state, initial_state, step, version, max_steps, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, 0, 0, $6, $7, $8) ON CONFLICT (id) DO NOTHING`
	selectRunSQL = `SELECT id, owner, principal, state, initial_state, step, version, max_steps, created_at, updated_at
FROM runs WHERE id = $1`
)

// RunArgs are the arguments of Queries.InsertRun for run: Step and Version
// 0, an InitialState left nil taken from State, a zero CreatedAt c's now
// and a zero UpdatedAt CreatedAt.
func (d *Dialect) RunArgs(run *types.Run, c clock.Clock) ([]any, error) {
	principal, err := json.Marshal(run.Principal)
	if err != nil {
		return nil, fmt.Errorf("%s: create run %q: principal: %w", d.Name, run.ID, err)
	}
	initial := run.InitialState
	if initial == nil {
		initial = run.State
	}
	created, updated := createdUpdated(run.CreatedAt, run.UpdatedAt, c)
	return []any{run.ID, run.Owner, string(principal), d.JSONArg(run.State), d.JSONArg(initial),
		run.MaxSteps, created, updated}, nil
}

// createdUpdated are a record's created_at and updated_at: a zero created
// is c's now, a zero updated is created.
func createdUpdated(created, updated time.Time, c clock.Clock) (int64, int64) {
	if created.IsZero() {
		created = c.Now()
	}
	if updated.IsZero() {
		updated = created
	}
	return Nanos(created), Nanos(updated)
}

// GetRun reads the run, or answers store.ErrNotFound.
func (r Reads) GetRun(ctx context.Context, id string) (*types.Run, error) {
	if r.db.Closed() {
		return nil, errClosed
	}
	var run types.Run
	var principal json.RawMessage
	c := r.cols
	err := r.db.QueryRow(ctx, r.q.selectRun, id).Scan(&run.ID, &run.Owner, c.JSON(&principal),
		c.JSON(&run.State), c.JSON(&run.InitialState), &run.Step, &run.Version, &run.MaxSteps,
		c.Time(&run.CreatedAt), c.Time(&run.UpdatedAt))
	if r.db.NoRows(err) {
		return nil, r.notFound(fmt.Sprintf("get run %q", id))
	}
	if err != nil {
		return nil, r.db.ReadErr(fmt.Sprintf("get run %q", id), err)
	}
	if err := DecodeExact(principal, &run.Principal); err != nil {
		return nil, fmt.Errorf("%s: get run %q: principal: %w", r.dialect.Name, id, err)
	}
	return &run, nil
}
