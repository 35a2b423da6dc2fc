package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// errNoExecution is the answer to a Commit without its required Execution.
var errNoExecution = errors.New("postgres: commit without an execution")

const commitDiagnosisSQL = `SELECT (SELECT version FROM runs WHERE id = $1), EXISTS (SELECT 1 FROM operations WHERE "key" = $2)`

// Commit writes the execution row, the operation update and the run's new
// version (and state) in one statement, packed by the store's writer with
// the other calls' writes into one transaction, and answers once that is
// committed. The run is c.Execution.RunID; a missing run or operation is
// store.ErrNotFound, a run at another version than c.ExpectVersion (with
// c.NewState) is store.ErrVersionConflict, and then nothing is written.
// The run's UpdatedAt becomes the execution's FinishedAt (now when zero);
// a zero c.Operation.At is now.
func (s *Store) Commit(ctx context.Context, c *store.Commit) error {
	if c.Execution == nil {
		return errNoExecution
	}
	if u := c.Operation; u != nil && u.Status != "" && !validStatus(u.Status) {
		return fmt.Errorf("postgres: commit operation %q: invalid status %q", u.Key, u.Status)
	}
	var id, version int64
	r := commitRequest(c, nanos(s.opts.Clock.Now()), &id, &version)
	err := s.w.do(ctx, r)
	if errors.Is(err, errCommitRefused) {
		// Nothing was written: say why, from what is committed now.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.WriteTimeout)
		defer cancel()
		if err = commitRefused(dctx, s.pool, c); err != nil {
			err = fmt.Errorf("postgres: %s: %w", r.op, err)
		}
	}
	if err != nil {
		return err
	}
	c.Execution.ID, c.Execution.Version = id, version
	return nil
}

// commitRequest is c as a request of the writer, which sets id and
// version. Without c.TakeStep it is one statement (commitStatement),
// whose refusal writes nothing. With it, the step is taken in round 0 and
// the row, whose result depends on the step, written in round 1; should
// that be refused, the step taken must be undone: the request then runs
// alone (errAlone), in a transaction its refusal rolls back.
func commitRequest(c *store.Commit, now int64, id, version *int64) *request {
	e := c.Execution
	r := &request{op: fmt.Sprintf("commit to run %q", e.RunID), runID: e.RunID, rounds: 1}
	scan := func(br pgx.BatchResults) (refused bool, err error) {
		err = br.QueryRow().Scan(id, version)
		if errors.Is(err, pgx.ErrNoRows) {
			return true, nil
		}
		return false, err
	}
	if c.TakeStep == nil {
		query, args := commitStatement(c, now)
		r.queue = func(_ int, b *pgx.Batch) int { b.Queue(query, args...); return 1 }
		r.read = func(_ int, br pgx.BatchResults) (error, error) {
			if refused, err := scan(br); refused {
				return errCommitRefused, nil
			} else {
				return nil, err
			}
		}
		return r
	}
	stepThenCommit(r, c, now, id, version)
	return r
}

// stepThenCommit makes r the two rounds of a commit that takes the step:
// round 0 takes it (a missing run is store.ErrNotFound, a spent budget
// store.ErrStepBudget) and computes the row's result from it; round 1
// writes the row, and a refusal there asks for the request to run alone.
func stepThenCommit(r *request, c *store.Commit, now int64, id, version *int64) {
	e := c.Execution
	r.rounds = 2
	r.queue = func(round int, b *pgx.Batch) int {
		if round == 0 {
			b.Queue(admitStepSQL, now, e.RunID)
		} else {
			query, args := commitStatement(c, now)
			b.Queue(query+refuseLoudly, args...)
		}
		return 1
	}
	r.read = func(round int, br pgx.BatchResults) (error, error) {
		if round == 1 {
			err := br.QueryRow().Scan(id, version)
			if isRefusedLoudly(err) {
				err = fmt.Errorf("%w: %w", errAlone, err)
			}
			return nil, err
		}
		var step *int64
		var exists bool
		if err := br.QueryRow().Scan(&step, &exists); err != nil {
			return nil, err
		}
		switch {
		case step == nil && !exists:
			return store.ErrNotFound, nil
		case step == nil:
			return store.ErrStepBudget, nil
		}
		e.Step, e.Result = *step, c.TakeStep(*step)
		return nil, nil
	}
}

// refuseLoudly, appended to a commit statement, turns its refusal (no
// row inserted) into a server error of toolgate's own SQLSTATE
// (refusedSQLState, raised by the function toolgate_refuse_commit of
// migration 0004), which aborts the transaction and every statement after
// it, the COMMIT sent in the same pipeline included. The function is
// volatile, so the server calls it only when the WHERE holds.
const refuseLoudly = "\nUNION ALL SELECT 0, toolgate_refuse_commit() WHERE NOT EXISTS (SELECT 1 FROM inserted)"

// refusedSQLState is the SQLSTATE of refuseLoudly's error.
const refusedSQLState = "TG001"

// isRefusedLoudly reports whether err is the error of refuseLoudly.
func isRefusedLoudly(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == refusedSQLState
}

// commitStatement builds the one statement of c, a chain of data-modifying
// CTEs that writes everything or nothing:
//
//	locked:   lock the operation's row (FOR UPDATE), so that it cannot be
//	          deleted between the check and the settlement;
//	run:      bump the run's version (and set its state, at the expected
//	          version), only if the operation is there;
//	settle:   update (or delete) the operation, only if run did;
//	inserted: insert the execution at the run's new version, only if run did.
//
// now is the time of the zero timestamps. The SQL differs by the shape of
// c only (state or not; no operation, settle, complete or delete), so pgx
// caches a handful of prepared statements.
func commitStatement(c *store.Commit, now int64) (string, []any) {
	e := c.Execution
	var p params
	var q strings.Builder
	runID := p.add(e.RunID)
	updatedAt := nanos(e.FinishedAt)
	if updatedAt == 0 {
		updatedAt = now
	}
	u := c.Operation
	var key string
	q.WriteString("WITH ")
	if u != nil {
		key = p.add(u.Key)
		q.WriteString(`locked AS (SELECT 1 FROM operations WHERE "key" = ` + key + " FOR UPDATE),\n")
	}
	q.WriteString("run AS (UPDATE runs SET version = version + 1, updated_at = " + p.add(updatedAt))
	if len(c.NewState) > 0 {
		q.WriteString(", state = " + p.typed(string(c.NewState), "json"))
	}
	q.WriteString(" WHERE id = " + runID)
	if len(c.NewState) > 0 {
		q.WriteString(" AND version = " + p.add(c.ExpectVersion))
	}
	if u != nil {
		q.WriteString(" AND EXISTS (SELECT 1 FROM locked)")
	}
	q.WriteString(" RETURNING version),\n")
	if u != nil {
		settleCTE(&q, &p, u, key, now)
	}
	limitCTEs(&q, &p, c, runID, key)
	insertedCTE(&q, &p, e, runID)
	return q.String(), p.values
}

// settleCTE writes the settle CTE of the operation update u (its key's
// parameter is key): delete the operation when u.Status is "", else set
// its status, result and times (at u.At, or now when zero), only if run
// did.
func settleCTE(q *strings.Builder, p *params, u *store.OperationUpdate, key string, now int64) {
	at := nanos(u.At)
	if at == 0 {
		at = now
	}
	if u.Status == "" {
		q.WriteString(`settle AS (DELETE FROM operations WHERE "key" = ` + key + " AND EXISTS (SELECT 1 FROM run)),\n")
		return
	}
	atMark := p.add(at)
	q.WriteString("settle AS (UPDATE operations SET status = " + p.add(string(u.Status)) +
		", result = " + p.typed(jsonArg(u.Result), "json") + ", updated_at = " + atMark)
	if u.Status == types.OpCompleted {
		q.WriteString(", completed_at = " + atMark)
	}
	q.WriteString(` WHERE "key" = ` + key + " AND EXISTS (SELECT 1 FROM run)),\n")
}

// insertedCTE writes the inserted CTE, which inserts the execution e at
// the run's new version, only if run did, and the statement's final
// SELECT of the row's id and version.
func insertedCTE(q *strings.Builder, p *params, e *types.Execution, runID string) {
	// INSERT ... SELECT takes no type from the target columns: the
	// parameters carry casts.
	q.WriteString(`inserted AS (INSERT INTO executions (run_id, step, call_id, tool, dependency, args_hash, args,
operation_key, code, ok, side_effect, replayed, verified, attempts, retries, latency_ms, input_tokens,
output_tokens, started_at, finished_at, version, state_patch, result, trace_id) SELECT `)
	values := []string{
		runID + "::text", p.typed(e.Step, "bigint"), p.typed(e.CallID, "text"), p.typed(e.Tool, "text"),
		p.typed(e.Dependency, "text"), p.typed(e.ArgsHash, "text"), p.typed(jsonArg(e.Args), "json"),
		p.typed(e.OperationKey, "text"), p.typed(string(e.Code), "text"), p.typed(e.OK, "boolean"),
		p.typed(string(e.SideEffect), "text"), p.typed(e.Replayed, "boolean"), p.typed(e.Verified, "boolean"),
		p.typed(int64(e.Attempts), "bigint"), p.typed(int64(e.Retries), "bigint"),
		p.typed(e.LatencyMS, "double precision"), p.typed(e.InputTokens, "bigint"),
		p.typed(e.OutputTokens, "bigint"), p.typed(nanos(e.StartedAt), "bigint"),
		p.typed(nanos(e.FinishedAt), "bigint"), "run.version", p.typed(jsonArg(e.StatePatch), "json"),
		p.typed(jsonArg(e.Result), "json"), p.typed(e.TraceID, "text"),
	}
	q.WriteString(strings.Join(values, ", "))
	q.WriteString(" FROM run RETURNING id, version)\nSELECT id, version FROM inserted")
}

// commitRefused says why the commit statement wrote nothing, in the order
// store/sqlite checks: the run is missing; the run is at another version
// (with a state); the operation is missing. Nothing was written.
func commitRefused(ctx context.Context, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, c *store.Commit) error {
	var key string
	if c.Operation != nil {
		key = c.Operation.Key
	}
	var version *int64
	var opExists bool
	if err := conn.QueryRow(ctx, commitDiagnosisSQL, c.Execution.RunID, key).Scan(&version, &opExists); err != nil {
		return err
	}
	switch {
	case version == nil:
		return store.ErrNotFound
	case len(c.NewState) > 0 && *version != c.ExpectVersion:
		return store.ErrVersionConflict
	case c.Operation != nil && !opExists:
		return fmt.Errorf("operation %q: %w", key, store.ErrNotFound)
	case len(c.NewState) > 0:
		// The version moved on to the expected one since the statement,
		// which found it elsewhere.
		return store.ErrVersionConflict
	default:
		return fmt.Errorf("run %q updated no row", c.Execution.RunID)
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
