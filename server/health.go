package server

import (
	"context"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/internal/buildinfo"
	"github.com/toolgate/toolgate/types"
)

// HealthTimeout bounds the store ping of GET /healthz.
const HealthTimeout = 2 * time.Second

// healthz is GET /healthz: 200 {"ok": true, "config_version": "...",
// "version": "...", "keys_required": true} when the store answers, 503
// otherwise. It needs no key.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := s.gw.Store().Ping(ctx); err != nil {
		s.writeError(w, r, &apiError{status: http.StatusServiceUnavailable, code: types.CodeUnavailable,
			message: "toolgate's store is not answering", cause: err})
		return
	}
	writeJSON(w, http.StatusOK, health{OK: true, ConfigVersion: s.gw.Config().Version, Version: buildinfo.Version(),
		KeysRequired: !s.devMode()})
}

// health is the answer of GET /healthz.
type health struct {
	OK bool `json:"ok"`
	// ConfigVersion is the live config's version (GET /v1/config has more).
	ConfigVersion string `json:"config_version"`
	// Version is toolgate's own version (`toolgate version` has the rest).
	Version string `json:"version"`
	// KeysRequired says the API asks for a key (auth.keys is set): the
	// dashboard shows its sign-in box without first sending a request that
	// would be refused.
	KeysRequired bool `json:"keys_required"`
}
