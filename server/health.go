package server

import (
	"context"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/types"
)

// HealthTimeout bounds the store ping of GET /healthz.
const HealthTimeout = 2 * time.Second

// healthz is GET /healthz: 200 {"ok": true} when the store answers, 503
// otherwise. It needs no key.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := s.gw.Store().Ping(ctx); err != nil {
		s.writeError(w, r, &apiError{status: http.StatusServiceUnavailable, code: types.CodeUnavailable,
			message: "toolgate's store is not answering", cause: err})
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
