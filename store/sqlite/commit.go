package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

const (
	commitStateSQL = `UPDATE runs SET version = version + 1, state = ?, updated_at = ?
WHERE id = ? AND version = ? RETURNING version`
	commitVersionSQL   = `UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ? RETURNING version`
	insertExecutionSQL = `INSERT INTO executions (run_id, step, call_id, tool, dependency, args_hash, args,
operation_key, code, ok, side_effect, replayed, verified, attempts, retries, latency_ms, input_tokens,
output_tokens, started_at, finished_at, version, state_patch, result, trace_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// errNoExecution is the answer to a Commit without its required Execution.
var errNoExecution = errors.New("sqlite: commit without an execution")

// Commit writes the execution row, the operation update and the run's new
// version (and state) inside one savepoint of a group-commit transaction,
// and answers once that transaction is durable. The run is
// c.Execution.RunID; a missing run or operation is store.ErrNotFound. The
// run's UpdatedAt becomes the execution's FinishedAt (now when zero); a
// zero c.Operation.At is now.
func (s *Store) Commit(ctx context.Context, c *store.Commit) error {
	if c.Execution == nil {
		return errNoExecution
	}
	e := c.Execution
	if c.Operation != nil && c.Operation.Status != "" && !validStatus(c.Operation.Status) {
		return fmt.Errorf("sqlite: commit operation %q: invalid status %q", c.Operation.Key, c.Operation.Status)
	}
	// Everything is encoded here, in the caller's goroutine: the writer
	// goroutine, which every write waits for, only runs statements.
	var now int64
	if e.FinishedAt.IsZero() || (c.Operation != nil && c.Operation.At.IsZero()) {
		now = nanos(s.opts.Clock.Now())
	}
	updatedAt := nanos(e.FinishedAt)
	if updatedAt == 0 {
		updatedAt = now
	}
	runQuery, runArgs := commitVersionSQL, []any{updatedAt, e.RunID}
	setState := len(c.NewState) > 0
	if setState {
		runQuery, runArgs = commitStateSQL, []any{string(c.NewState), updatedAt, e.RunID, c.ExpectVersion}
	}
	var opArgs []any
	if u := c.Operation; u != nil {
		at := nanos(u.At)
		if at == 0 {
			at = now
		}
		opArgs = []any{string(u.Status), jsonText(u.Result), at, u.Status == types.OpCompleted, at, u.Key}
	}
	opQuery := settleOperationSQL
	if c.Operation != nil && c.Operation.Status == "" {
		opQuery, opArgs = deleteOperationSQL, []any{c.Operation.Key}
	}
	execArgs := []any{e.RunID, e.Step, e.CallID, e.Tool, e.Dependency, e.ArgsHash, jsonText(e.Args),
		e.OperationKey, string(e.Code), e.OK, string(e.SideEffect), e.Replayed, e.Verified, e.Attempts, e.Retries,
		e.LatencyMS, e.InputTokens, e.OutputTokens, nanos(e.StartedAt), nanos(e.FinishedAt), nil,
		jsonText(e.StatePatch), jsonText(e.Result), e.TraceID}
	const execVersionArg = 20

	var id, version int64
	// The row of a call that settled no operation and changed no state (a
	// read, a refusal) records no effect: see writer.doLight.
	submit := s.w.do
	if c.Operation == nil && len(c.NewState) == 0 {
		submit = s.w.doLight
	}
	err := submit(ctx, func(ctx context.Context, tx *writeTx) error {
		err := tx.queryRow(ctx, runQuery, runArgs, &version)
		if errors.Is(err, sql.ErrNoRows) {
			return commitRunMissing(ctx, tx, e.RunID, setState)
		}
		if err != nil {
			return err
		}
		if opArgs != nil {
			n, err := tx.affected(ctx, opQuery, opArgs...)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("operation %q: %w", c.Operation.Key, store.ErrNotFound)
			}
		}
		execArgs[execVersionArg] = version
		res, err := tx.exec(ctx, insertExecutionSQL, execArgs...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: commit to run %q: %w", e.RunID, err)
	}
	e.ID, e.Version = id, version
	return nil
}

// commitRunMissing says why the run's UPDATE found no row: the run does
// not exist, or (with a state) it is at another version.
func commitRunMissing(ctx context.Context, tx *writeTx, runID string, setState bool) error {
	exists, err := tx.exists(ctx, runExistsSQL, runID)
	switch {
	case err != nil:
		return err
	case !exists:
		return store.ErrNotFound
	case setState:
		return store.ErrVersionConflict
	default:
		return fmt.Errorf("run %q updated no row", runID)
	}
}

// validStatus reports whether status is one of the ledger's three.
func validStatus(status types.OpStatus) bool {
	switch status {
	case types.OpStarted, types.OpCompleted, types.OpUnknown:
		return true
	}
	return false
}
