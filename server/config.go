package server

import (
	"net/http"
	"time"
)

// getConfig is GET /v1/config: which configuration is live (its version,
// the file, when it was loaded), which changed keys wait for a restart,
// and how the last reload went. It holds no secret.
func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.gw.ConfigInfo())
}

// extendWriteDeadline gives the answer of a call of tool the time it
// needs when a reloaded config made the tool slower than the write timeout
// the server was started with (which a running http.Server cannot change).
func (s *Server) extendWriteDeadline(w http.ResponseWriter, tool string) {
	cfg := s.gw.Config()
	t := cfg.Tools[tool]
	if t == nil {
		return
	}
	if d := callBound(cfg, t) + WriteMargin; d > s.writeTimeout {
		// An error means the writer has no deadline to extend (a test
		// recorder): nothing to do.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}
