package postgres

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
// f.Ascending; a limit of 0 or less means 100. With a run, rows are in
// version order (commit order within the run); without one, in id order,
// which across runs follows commit order only roughly (ids are taken at
// INSERT, not at COMMIT).
func (s *Store) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	query, args := listExecutionsQuery(f)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, s.readErr("list executions", err)
	}
	defer rows.Close()
	var out []types.Execution
	for rows.Next() {
		var e types.Execution
		var attempts, retries, started, finished int64
		err := rows.Scan(&e.ID, &e.RunID, &e.Step, &e.CallID, &e.Tool, &e.Dependency, &e.ArgsHash,
			jsonDest(&e.Args), &e.OperationKey, &e.Code, &e.OK, &e.SideEffect, &e.Replayed, &e.Verified,
			&attempts, &retries, &e.LatencyMS, &e.InputTokens, &e.OutputTokens, &started,
			&finished, &e.Version, jsonDest(&e.StatePatch), jsonDest(&e.Result), &e.TraceID)
		if err != nil {
			return nil, s.readErr("list executions", err)
		}
		e.Attempts, e.Retries = int(attempts), int(retries)
		e.StartedAt, e.FinishedAt = fromNanos(started), fromNanos(finished)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr("list executions", err)
	}
	return out, nil
}

// listExecutionsQuery builds the SELECT of f. With a run, rows are ordered
// by (version, id), the order of the (run_id, version) index.
func listExecutionsQuery(f types.ExecutionFilter) (string, []any) {
	var p params
	var where []string
	if f.RunID != "" {
		where = append(where, "run_id = "+p.add(f.RunID))
	}
	if f.Tool != "" {
		where = append(where, "tool = "+p.add(f.Tool))
	}
	if f.Owner != "" {
		where = append(where, "run_id IN (SELECT id FROM runs WHERE owner = "+p.add(f.Owner)+")")
	}
	if !f.Since.IsZero() {
		where = append(where, "finished_at >= "+p.add(nanos(f.Since)))
	}
	if f.Code != "" {
		where = append(where, "code = "+p.add(string(f.Code)))
	}
	if !f.Until.IsZero() {
		where = append(where, "finished_at < "+p.add(nanos(f.Until)))
	}
	if f.BeforeID > 0 {
		where = append(where, "id < "+p.add(f.BeforeID))
	}
	if f.AfterID > 0 {
		where = append(where, "id > "+p.add(f.AfterID))
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
	q.WriteString(" LIMIT " + p.add(limit))
	return q.String(), p.values
}
