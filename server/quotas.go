package server

import (
	"net/http"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/types"
)

// QuotaDocument is the answer of GET /v1/quotas.
type QuotaDocument struct {
	Quotas []toolgate.QuotaUse `json:"quotas"`
}

// listQuotas is GET /v1/quotas: every quota key's use inside its window.
// Quota keys name principals of every key's runs, so only operator
// (approver) keys may list them, as they may decide approvals.
func (s *Server) listQuotas(w http.ResponseWriter, r *http.Request) {
	if !s.approver(r.Context()) {
		s.writeError(w, r, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
			message: "quota use spans every key's runs: only an operator key (approver: true) may list it"})
		return
	}
	uses, err := s.gw.QuotaUsage(r.Context())
	if err != nil {
		s.writeError(w, r, &apiError{status: http.StatusServiceUnavailable, code: types.CodeUnavailable,
			message: "the quotas could not be read from the store", cause: err})
		return
	}
	writeJSON(w, http.StatusOK, QuotaDocument{Quotas: uses})
}
