package server

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// ExecutionList is the answer of GET /v1/executions.
type ExecutionList struct {
	Executions []types.Execution `json:"executions"`
	// NextCursor, on every page but the last, is the cursor= that asks for
	// the next page (older rows); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// listExecutions is GET /v1/executions?run=&key=&tool=&code=&since=&until=
// &limit=&cursor=: monitoring rows, newest first, a page at a time. A key
// sees only the rows of its own runs; with run= and key=, an approver key
// those of another key's run (viewedRun). Pages are keyed on the row id, which
// only grows: rows committed while a reader pages never shift the pages
// still to come.
func (s *Server) listExecutions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, executionQueryParams...); e != nil {
		s.writeError(w, r, e)
		return
	}
	f, err := ParseExecutionQuery(q)
	if err != nil {
		s.writeError(w, r, badRequest("%s", err))
		return
	}
	key := q.Get("key")
	switch {
	case key != "" && f.RunID == "":
		s.writeError(w, r, badRequest("key= names the key whose run= to list; give run= with it"))
		return
	case f.RunID != "":
		run, e := s.viewedRun(r, f.RunID, key)
		if e != nil {
			s.writeError(w, r, e)
			return
		}
		f.RunID = run.ID
	case s.devMode():
	default:
		// The store keeps the key's own rows (the runs it owns).
		f.Owner = KeyName(r.Context())
	}
	// One row more than the page tells whether another page follows.
	pageSize := f.Limit
	f.Limit++
	rows, err := s.gw.Store().ListExecutions(r.Context(), f)
	if err != nil {
		s.writeError(w, r, storeError(err))
		return
	}
	list := &ExecutionList{Executions: rows}
	if len(rows) > pageSize {
		list.Executions = rows[:pageSize]
		list.NextCursor = encodeCursor(rows[pageSize-1].ID)
	}
	if list.Executions == nil {
		list.Executions = []types.Execution{}
	}
	if key == "" {
		key = KeyName(r.Context())
	}
	publicRunIDs(list.Executions, key)
	writeJSON(w, http.StatusOK, list)
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

// noQuery serves a route that takes no query parameters: a request with
// any (?_method=DELETE, a misspelt filter) is refused 400 bad_request
// naming them, as the documentation promises, instead of being served as
// if they were not there. It runs after authentication.
func (s *Server) noQuery(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			h(w, r)
			return
		}
		names := slices.Sorted(maps.Keys(r.URL.Query()))
		if len(names) == 0 {
			h(w, r) // "?" or "?&": nothing named
			return
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = fmt.Sprintf("%q", clip(n))
		}
		noun := "parameter"
		if len(names) > 1 {
			noun += "s"
		}
		s.writeError(w, r, badRequest("unknown query %s %s: %s takes no query parameters", noun, strings.Join(quoted, ", "), r.Pattern))
	})
}
