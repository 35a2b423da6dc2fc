package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

const (
	commitStateSQL = `UPDATE runs SET version = version + 1, state = ?, updated_at = ?
WHERE id = ? AND version = ?`
	commitVersionSQL = `UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ?`
	runVersionSQL    = `SELECT version FROM runs WHERE id = ?`
	commitStepSQL    = `UPDATE runs SET version = version + 1, step = step + 1, updated_at = ?
WHERE id = ? AND (max_steps <= 0 OR step < max_steps)`
	runVersionStepSQL  = `SELECT version, step FROM runs WHERE id = ?`
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
	w := s.encodeCommit(c)
	// The row of a call that settled no operation and changed no state (a
	// read, a refusal) records no effect: see writer.doLight.
	light := c.Operation == nil && len(c.NewState) == 0 && c.ReleaseWriter == ""
	if err := s.w.doAfter(ctx, light, w.apply, w.after); err != nil {
		return fmt.Errorf("sqlite: commit to run %q: %w", e.RunID, err)
	}
	e.ID, e.Version = w.id, w.version
	if c.TakeStep != nil {
		e.Step, e.Result = w.step, w.result
	}
	return nil
}

// commitWrite is one Commit on its way through the writer: its statements'
// arguments, encoded in the caller's goroutine (the writer goroutine, which
// every write waits for, only runs statements), and what the transaction
// decides: the run's step and version, the step's result and the row's id.
type commitWrite struct {
	s                 *Store
	c                 *store.Commit
	updatedAt         int64
	runQuery, opQuery string
	runArgs, opArgs   []any
	execArgs          []any

	id, version, step int64
	result            json.RawMessage
}

// encodeCommit encodes c's statements for the writer.
func (s *Store) encodeCommit(c *store.Commit) *commitWrite {
	now, updatedAt := s.commitTimes(c)
	w := &commitWrite{s: s, c: c, updatedAt: updatedAt, execArgs: executionArgs(c.Execution)}
	w.runQuery, w.runArgs = runUpdate(c, updatedAt)
	w.opQuery, w.opArgs = operationArgs(c.Operation, now)
	return w
}

// apply runs in the writer's transaction: it moves the run on (taking the
// step when asked), settles the operation, applies the limits' changes and
// inserts the execution row.
func (w *commitWrite) apply(ctx context.Context, tx *writeTx) error {
	if err := w.moveRun(ctx, tx); err != nil {
		return err
	}
	if w.opArgs != nil {
		if err := settleIn(ctx, tx, w.opQuery, w.opArgs, w.c.Operation.Key); err != nil {
			return err
		}
	}
	if err := commitLimitsIn(ctx, tx, w.c); err != nil {
		return err
	}
	w.execArgs[execVersionArg] = w.version
	res, err := tx.exec(ctx, insertExecutionSQL, w.execArgs...)
	if err != nil {
		return err
	}
	w.id, err = res.LastInsertId()
	return err
}

// moveRun takes the call's step when asked (the step and its result then
// go into the execution row) and moves the run to its new version, with
// its new state when the commit sets one.
func (w *commitWrite) moveRun(ctx context.Context, tx *writeTx) error {
	c, runID, setState := w.c, w.c.Execution.RunID, len(w.c.NewState) > 0
	if c.TakeStep != nil {
		var err error
		if w.step, err = takeStepIn(ctx, tx, runID, setState, w.updatedAt, w.runArgs, &w.version); err != nil {
			return err
		}
		w.result = c.TakeStep(w.step)
		w.execArgs[execStepArg], w.execArgs[execResultArg] = w.step, jsonText(w.result)
	}
	if c.TakeStep == nil || setState {
		var err error
		if w.version, err = bumpVersion(ctx, tx, w.runQuery, w.runArgs, runID, setState, c.ExpectVersion); err != nil {
			return err
		}
	}
	return nil
}

// after tells the run cache the run's new version (state, step), in
// commit order, once the commit's batch is committed.
func (w *commitWrite) after() {
	c := w.c
	var newState json.RawMessage
	if len(c.NewState) > 0 {
		newState = append(json.RawMessage(nil), c.NewState...)
	}
	taken := int64(0)
	if c.TakeStep != nil {
		taken = w.step
	}
	w.s.runs.committed(c.Execution.RunID, w.version, newState, taken, fromNanos(w.updatedAt))
}

// commitTimes are the clock's now, read only when c needs it (0 when it
// does not), and the run's updated_at: the execution's end, else now.
func (s *Store) commitTimes(c *store.Commit) (now, updatedAt int64) {
	e := c.Execution
	if e.FinishedAt.IsZero() || (c.Operation != nil && c.Operation.At.IsZero()) {
		now = nanos(s.opts.Clock.Now())
	}
	updatedAt = nanos(e.FinishedAt)
	if updatedAt == 0 {
		updatedAt = now
	}
	return now, updatedAt
}

// runUpdate is the statement that moves c's run to its new version (and
// state, when c sets one) and its arguments.
func runUpdate(c *store.Commit, updatedAt int64) (query string, args []any) {
	e := c.Execution
	if len(c.NewState) > 0 {
		return commitStateSQL, []any{string(c.NewState), updatedAt, e.RunID, c.ExpectVersion}
	}
	return commitVersionSQL, []any{updatedAt, e.RunID}
}

// The places in executionArgs of the values the writer fills in.
const execStepArg, execVersionArg, execResultArg = 1, 20, 22

// executionArgs are the arguments of insertExecutionSQL for e, encoded in
// the caller's goroutine; the step, version and result places are
// overwritten in the transaction when it decides them.
func executionArgs(e *types.Execution) []any {
	return []any{e.RunID, e.Step, e.CallID, e.Tool, e.Dependency, e.ArgsHash, jsonText(e.Args),
		e.OperationKey, string(e.Code), e.OK, string(e.SideEffect), e.Replayed, e.Verified, e.Attempts, e.Retries,
		e.LatencyMS, e.InputTokens, e.OutputTokens, nanos(e.StartedAt), nanos(e.FinishedAt), nil,
		jsonText(e.StatePatch), jsonText(e.Result), e.TraceID}
}

// operationArgs is the statement that settles u (deletes it when its status
// is "") and its arguments, nil when u is; an update without a time is
// settled at now.
func operationArgs(u *store.OperationUpdate, now int64) (query string, args []any) {
	var opArgs []any
	if u != nil {
		at := nanos(u.At)
		if at == 0 {
			at = now
		}
		opArgs = []any{string(u.Status), jsonText(u.Result), at, u.Status == types.OpCompleted, at, u.Key}
	}
	opQuery := settleOperationSQL
	if u != nil && u.Status == "" {
		opQuery, opArgs = deleteOperationSQL, []any{u.Key}
	}
	return opQuery, opArgs
}

// takeStepIn takes the call's step in tx (see store.Commit.TakeStep): with
// the version in one UPDATE when no state is set, the two read back into
// *version and step with a SELECT (see bumpVersion).
func takeStepIn(ctx context.Context, tx *writeTx, runID string, setState bool, updatedAt int64, runArgs []any, version *int64) (step int64, err error) {
	if setState {
		return admitIn(ctx, tx, runID, updatedAt)
	}
	var n int64
	if n, err = tx.affected(ctx, commitStepSQL, runArgs...); err == nil {
		if n == 0 {
			err = stepRefused(ctx, tx, runID)
		} else {
			err = tx.queryRow(ctx, runVersionStepSQL, []any{runID}, version, &step)
		}
	}
	return step, err
}

// settleIn runs the statement that settles the operation key, which must
// exist.
func settleIn(ctx context.Context, tx *writeTx, query string, args []any, key string) error {
	n, err := tx.affected(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("operation %q: %w", key, store.ErrNotFound)
	}
	return nil
}

// bumpVersion runs the run's UPDATE (query, args) and returns its new
// version: ExpectVersion + 1 when the UPDATE was conditional on it (with a
// state), else read back. UPDATE ... RETURNING would be one statement, but
// SQLite keeps the rows it returns in a temporary table made for each
// execution, which costs three times a plain UPDATE: more than the
// SELECT.
func bumpVersion(ctx context.Context, tx *writeTx, query string, args []any, runID string, setState bool, expect int64) (int64, error) {
	n, err := tx.affected(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, commitRunMissing(ctx, tx, runID, setState)
	}
	if setState {
		return expect + 1, nil
	}
	var version int64
	err = tx.queryRow(ctx, runVersionSQL, []any{runID}, &version)
	return version, err
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
