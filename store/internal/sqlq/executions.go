package sqlq

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// DefaultListLimit is the row count of a list whose limit is 0 or less.
const DefaultListLimit = 100

// listLimit is limit, or DefaultListLimit when it is 0 or less.
func listLimit(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return limit
}

// ExecutionColumns are the columns of an execution row, in the order
// scanExecution reads them.
const ExecutionColumns = `id, run_id, step, call_id, tool, dependency, args_hash, args, operation_key, code, ok,
side_effect, replayed, verified, attempts, retries, latency_ms, input_tokens, output_tokens, started_at,
finished_at, version, state_patch, result, trace_id`

// ListExecutions returns the rows f selects, newest first unless
// f.Ascending; a limit of 0 or less means 100. With a run, rows are in
// version order (commit order within the run); without one, in id order.
// On SQLite, whose writer is the only one, id order is commit order; on
// PostgreSQL, ids are taken at INSERT rather than COMMIT, so across runs id
// order follows commit order only roughly.
func (r Reads) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	query, args := ListExecutionsQuery(r.dialect, f)
	return list(ctx, r, "list executions", query, args, func(row Row, e *types.Execution) error {
		return scanExecution(row, r.cols, e)
	})
}

// scanExecution reads one row of ExecutionColumns into e.
func scanExecution(row Row, c Columns, e *types.Execution) error {
	return row.Scan(&e.ID, &e.RunID, &e.Step, &e.CallID, &e.Tool, &e.Dependency, &e.ArgsHash,
		c.JSON(&e.Args), &e.OperationKey, &e.Code, &e.OK, &e.SideEffect, &e.Replayed, &e.Verified,
		&e.Attempts, &e.Retries, &e.LatencyMS, &e.InputTokens, &e.OutputTokens, c.Time(&e.StartedAt),
		c.Time(&e.FinishedAt), &e.Version, c.JSON(&e.StatePatch), c.JSON(&e.Result), &e.TraceID)
}

// ListExecutionsQuery builds the SELECT of f in dialect d and its
// arguments. With a run, rows are ordered by (version, id), the order of
// the (run_id, version) index and the same order as id within a run.
func ListExecutionsQuery(d *Dialect, f types.ExecutionFilter) (string, []any) {
	var where []string
	var args []any
	// add appends the condition cond, v's placeholder, then close.
	add := func(cond string, v any, close string) {
		args = append(args, v)
		where = append(where, cond+d.Param(len(args))+close)
	}
	if f.RunID != "" {
		add("run_id = ", f.RunID, "")
	}
	if f.Tool != "" {
		add("tool = ", f.Tool, "")
	}
	if f.Owner != "" {
		add("run_id IN (SELECT id FROM runs WHERE owner = ", f.Owner, ")")
	}
	if !f.Since.IsZero() {
		add("finished_at >= ", Nanos(f.Since), "")
	}
	if f.Code != "" {
		add("code = ", string(f.Code), "")
	}
	if !f.Until.IsZero() {
		add("finished_at < ", Nanos(f.Until), "")
	}
	if f.BeforeID > 0 {
		add("id < ", f.BeforeID, "")
	}
	if f.AfterID > 0 {
		add("id > ", f.AfterID, "")
	}
	var q strings.Builder
	q.WriteString("SELECT " + ExecutionColumns + " FROM executions")
	if len(where) > 0 {
		q.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	direction := " DESC"
	if f.Ascending {
		direction = ""
	}
	if f.RunID != "" {
		q.WriteString(" ORDER BY version" + direction + ", id" + direction)
	} else {
		q.WriteString(" ORDER BY id" + direction)
	}
	args = append(args, listLimit(f.Limit))
	q.WriteString(" LIMIT " + d.Param(len(args)))
	return q.String(), args
}
