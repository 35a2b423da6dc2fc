package server

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// Limits of GET /v1/executions.
const (
	// DefaultListLimit is the rows answered when no limit is given.
	DefaultListLimit = 100
	// MaxListLimit is the largest limit accepted.
	MaxListLimit = 1000
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
		run, e := s.ownedRun(r, f.RunID)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		f.RunID = run.ID
		rows, err = s.gw.Store().ListExecutions(r.Context(), f)
	case s.devMode():
		rows, err = s.gw.Store().ListExecutions(r.Context(), f)
	default:
		// The store keeps the key's own rows (the runs it owns).
		f.Owner = KeyName(r.Context())
		rows, err = s.gw.Store().ListExecutions(r.Context(), f)
	}
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	if rows == nil {
		rows = []types.Execution{}
	}
	publicRunIDs(rows, KeyName(r.Context()))
	writeJSON(w, http.StatusOK, &ExecutionList{Executions: rows})
}

// strictQuery refuses query parameters other than valid, naming them.
func strictQuery(q url.Values, valid ...string) *apiError {
	return refuseUnknown("query parameter", "the URL", slices.Sorted(maps.Keys(q)), valid)
}

// publicRunIDs shows each row's run by the id its key knows it by (the
// rows listed are the key's own runs; see types.ScopedRunID).
func publicRunIDs(rows []types.Execution, key string) {
	if key == "" {
		return
	}
	for i := range rows {
		rows[i].RunID = strings.TrimPrefix(rows[i].RunID, key+"/")
	}
}
