package server

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/toolgate/toolgate/types"
)

// Limits of GET /v1/executions.
const (
	// DefaultListLimit is the rows answered when no limit is given.
	DefaultListLimit = 100
	// MaxListLimit is the largest limit accepted.
	MaxListLimit = 1000
	// maxOwnerScan bounds the rows read to find a key's own rows when no
	// run is named.
	maxOwnerScan = 100_000
)

// ExecutionList is the answer of GET /v1/executions.
type ExecutionList struct {
	Executions []types.Execution `json:"executions"`
}

// listExecutions is GET /v1/executions?run=&tool=&limit=: monitoring rows,
// newest first. A key sees only the rows of its own runs.
func (s *Server) listExecutions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, "run", "tool", "limit"); e != nil {
		s.writeError(w, r, e)
		return
	}
	limit := DefaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxListLimit {
			s.writeError(w, r, badRequest("limit %q must be a whole number from 1 to %d", clip(v), MaxListLimit))
			return
		}
		limit = n
	}
	f := types.ExecutionFilter{RunID: q.Get("run"), Tool: q.Get("tool"), Limit: limit}
	var rows []types.Execution
	var err error
	switch {
	case f.RunID != "":
		if _, e := s.ownedRun(r, f.RunID); e != nil {
			s.writeError(w, r, e)
			return
		}
		rows, err = s.gw.Store().ListExecutions(r.Context(), f)
	case s.devMode():
		rows, err = s.gw.Store().ListExecutions(r.Context(), f)
	default:
		rows, err = s.ownRows(r, f)
	}
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	if rows == nil {
		rows = []types.Execution{}
	}
	writeJSON(w, http.StatusOK, &ExecutionList{Executions: rows})
}

// ownRows lists the newest rows of the caller's own runs. The store has no
// owner filter, so it reads growing batches and keeps the rows whose run
// the key owns, until it has f.Limit of them or the store has no more.
func (s *Server) ownRows(r *http.Request, f types.ExecutionFilter) ([]types.Execution, error) {
	want := f.Limit
	owner := map[string]bool{}
	for batch := want; ; batch *= 4 {
		f.Limit = min(batch, maxOwnerScan)
		rows, err := s.gw.Store().ListExecutions(r.Context(), f)
		if err != nil {
			return nil, err
		}
		out := make([]types.Execution, 0, want)
		for _, row := range rows {
			mine, seen := owner[row.RunID]
			if !seen {
				run, err := s.gw.GetRun(r.Context(), row.RunID)
				mine = err == nil && s.owns(r.Context(), run.Owner)
				owner[row.RunID] = mine
			}
			if mine {
				out = append(out, row)
				if len(out) == want {
					return out, nil
				}
			}
		}
		if len(rows) < f.Limit || f.Limit == maxOwnerScan {
			return out, nil
		}
	}
}

// strictQuery refuses query parameters other than valid, naming them.
func strictQuery(q url.Values, valid ...string) *apiError {
	return refuseUnknown("query parameter", "the URL", slices.Sorted(maps.Keys(q)), valid)
}
