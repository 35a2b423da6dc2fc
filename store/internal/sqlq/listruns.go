package sqlq

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/store"
)

// runSummaryColumns are the columns of a run of a list, in the order
// ListRuns scans them: the last call's tool and code come from the
// (run_id, version) index.
const runSummaryColumns = `r.id, r.owner, r.principal, r.step, r.max_steps, r.created_at, r.updated_at,
COALESCE((SELECT e.tool FROM executions e WHERE e.run_id = r.id ORDER BY e.version DESC, e.id DESC LIMIT 1), ''),
COALESCE((SELECT e.code FROM executions e WHERE e.run_id = r.id ORDER BY e.version DESC, e.id DESC LIMIT 1), '')`

// publicRunID is the expression of a run's id as its key knows it (see
// types.Run.PublicID).
const publicRunID = `CASE WHEN r.owner <> '' AND substr(r.id, 1, length(r.owner) + 1) = r.owner || '/'
THEN substr(r.id, length(r.owner) + 2) ELSE r.id END`

// ListRuns returns the runs f selects, newest first (store.RunLister).
func (r Reads) ListRuns(ctx context.Context, f store.RunFilter) ([]store.RunSummary, error) {
	query, args := ListRunsQuery(r.dialect, f)
	return list(ctx, r, "list runs", query, args, func(row Row, s *store.RunSummary) error {
		var principal json.RawMessage
		c := r.cols
		if err := row.Scan(&s.ID, &s.Owner, c.JSON(&principal), &s.Step, &s.MaxSteps, c.Time(&s.CreatedAt),
			c.Time(&s.UpdatedAt), &s.LastTool, &s.LastCode); err != nil {
			return err
		}
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(principal, &p); err != nil {
			return err
		}
		s.PrincipalID = p.ID
		return nil
	})
}

// ListRunsQuery builds the SELECT of f in dialect d and its arguments.
func ListRunsQuery(d *Dialect, f store.RunFilter) (string, []any) {
	var where []string
	var args []any
	// param appends v and returns its placeholder.
	param := func(v any) string {
		args = append(args, v)
		return d.Param(len(args))
	}
	if f.Owner != "" {
		where = append(where, "r.owner = "+param(f.Owner))
	}
	if f.PrincipalID != "" {
		where = append(where, d.principalID+" = "+param(f.PrincipalID))
	}
	if f.Tool != "" || f.Code != "" {
		cond := "EXISTS (SELECT 1 FROM executions e WHERE e.run_id = r.id"
		if f.Tool != "" {
			cond += " AND e.tool = " + param(f.Tool)
		}
		if f.Code != "" {
			cond += " AND e.code = " + param(string(f.Code))
		}
		where = append(where, cond+")")
	}
	if f.Query != "" {
		like := "%" + likeEscaper.Replace(strings.ToLower(f.Query)) + "%"
		where = append(where, "(lower("+publicRunID+") LIKE "+param(like)+` ESCAPE '\'`+
			" OR lower("+d.principalID+") LIKE "+param(like)+` ESCAPE '\')`)
	}
	if !f.Since.IsZero() {
		where = append(where, "r.created_at >= "+param(Nanos(f.Since)))
	}
	if f.After != nil {
		at := Nanos(f.After.CreatedAt)
		where = append(where, "(r.created_at < "+param(at)+" OR r.created_at = "+param(at)+" AND r.id < "+param(f.After.ID)+")")
	}
	var q strings.Builder
	q.WriteString("SELECT " + runSummaryColumns + " FROM runs r")
	if len(where) > 0 {
		q.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	q.WriteString(" ORDER BY r.created_at DESC, r.id DESC LIMIT " + param(listLimit(f.Limit)))
	return q.String(), args
}

// likeEscaper escapes LIKE's wildcards (ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
