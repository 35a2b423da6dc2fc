package sqlite

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

const executionColumns = `id, run_id, step, call_id, tool, dependency, args_hash, args, operation_key, code, ok,
side_effect, replayed, verified, attempts, retries, latency_ms, input_tokens, output_tokens, started_at,
finished_at, version, state_patch, result, trace_id`

// ListExecutions returns the rows f selects, newest first unless
// f.Ascending; a limit of 0 or less means 100. Rows are in commit order
// (their IDs), which within a run is also version order.
func (s *Store) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	query, args := listExecutionsQuery(f)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, s.readErr("list executions", err)
	}
	defer rows.Close()
	var out []types.Execution
	for rows.Next() {
		var e types.Execution
		err := rows.Scan(&e.ID, &e.RunID, &e.Step, &e.CallID, &e.Tool, &e.Dependency, &e.ArgsHash,
			jsonColumn{&e.Args}, &e.OperationKey, &e.Code, &e.OK, &e.SideEffect, &e.Replayed, &e.Verified,
			&e.Attempts, &e.Retries, &e.LatencyMS, &e.InputTokens, &e.OutputTokens, timeColumn{&e.StartedAt},
			timeColumn{&e.FinishedAt}, &e.Version, jsonColumn{&e.StatePatch}, jsonColumn{&e.Result}, &e.TraceID)
		if err != nil {
			return nil, s.readErr("list executions", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr("list executions", err)
	}
	return out, nil
}

// listExecutionsQuery builds the SELECT of f. With a run, rows are ordered
// by (version, id), the order of the (run_id, version) index and the same
// order as id within a run.
func listExecutionsQuery(f types.ExecutionFilter) (string, []any) {
	var where []string
	var args []any
	if f.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, f.RunID)
	}
	if f.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, f.Tool)
	}
	if f.Owner != "" {
		where, args = append(where, "run_id IN (SELECT id FROM runs WHERE owner = ?)"), append(args, f.Owner)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "finished_at >= ?"), append(args, nanos(f.Since))
	}
	if f.Code != "" {
		where, args = append(where, "code = ?"), append(args, string(f.Code))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "finished_at < ?"), append(args, nanos(f.Until))
	}
	if f.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	if f.AfterID > 0 {
		where, args = append(where, "id > ?"), append(args, f.AfterID)
	}
	var q strings.Builder
	q.WriteString("SELECT " + executionColumns + " FROM executions")
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
	limit := f.Limit
	if limit <= 0 {
		limit = defaultListLimit
	}
	q.WriteString(" LIMIT ?")
	return q.String(), append(args, limit)
}
