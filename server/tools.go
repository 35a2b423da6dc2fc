package server

import (
	"net/http"

	"github.com/toolgate/toolgate/export"
)

// listTools is GET /v1/tools?format=openai|openai-responses|anthropic|mcp: the tool list in
// that ecosystem's exact shape; without a format, toolgate's own
// {"tools": [...]}. It lists the caller's key's tools only (listedTools);
// scope=all, for an approver key (an operator, the dashboard), every tool.
func (s *Server) listTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := strictQuery(q, "format", "scope"); e != nil {
		s.writeError(w, r, e)
		return
	}
	tools, e := s.toolsInScope(r.Context(), q.Get("scope"))
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	list, err := export.Format(tools, q.Get("format"))
	if err != nil {
		s.writeError(w, r, badRequest("%v", err))
		return
	}
	writeJSON(w, http.StatusOK, list)
}
