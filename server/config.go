package server

import (
	"net/http"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/buildinfo"
)

// getConfig is GET /v1/config: which configuration is live (its version,
// the file, when it was loaded), which changed keys wait for a restart,
// how the last reload went, and which toolgate build serves it
// (`toolgate_version`, and `build` as `toolgate version` prints it; the
// config's own hash keeps the name `version`). It holds no secret.
func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, configAnswer{ConfigInfo: s.gw.ConfigInfo(), ToolgateVersion: buildinfo.Version(), Build: buildinfo.Read()})
}

// configAnswer is the answer of GET /v1/config.
type configAnswer struct {
	toolgate.ConfigInfo
	ToolgateVersion string         `json:"toolgate_version"`
	Build           buildinfo.Info `json:"build"`
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
