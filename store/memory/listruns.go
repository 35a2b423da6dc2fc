package memory

import (
	"context"
	"sort"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var _ store.RunLister = (*Store)(nil)

// ListRuns returns the runs f selects, newest first (store.RunLister).
func (s *Store) ListRuns(ctx context.Context, f store.RunFilter) ([]store.RunSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	// One pass over the log: each run's last call, and the runs with a
	// call that f's Tool and Code select.
	last := map[string]*execRow{}
	called := map[string]bool{}
	for i := 0; i < s.executions.len(); i++ {
		row := s.executions.at(i)
		run := s.executions.str(row, textRunID)
		last[run] = row
		if (f.Tool == "" || s.executions.equals(row, textTool, f.Tool)) &&
			(f.Code == "" || s.executions.equals(row, textCode, string(f.Code))) {
			called[run] = true
		}
	}
	var out []store.RunSummary
	for _, run := range s.runs {
		sum := store.RunSummary{ID: run.ID, Owner: run.Owner, PrincipalID: run.Principal.ID, Step: run.Step,
			MaxSteps: run.MaxSteps, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt}
		if !f.Matches(&sum) || (f.Tool != "" || f.Code != "") && !called[run.ID] {
			continue
		}
		if row := last[run.ID]; row != nil {
			sum.LastTool, sum.LastCode = s.executions.str(row, textTool), types.Code(s.executions.str(row, textCode))
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool {
		p := out[i].Position()
		return store.Before(&p, out[j].Position())
	})
	limit := f.Limit
	if limit <= 0 {
		limit = defaultListLimit
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
