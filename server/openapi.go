package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of toolgate's own HTTP API. It is
// written by hand beside docs/http-api.md; a test of package docs fails when
// a route is registered that it does not describe, or it describes one that
// is not registered.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document served at GET /v1/openapi.json.
func OpenAPI() []byte { return openAPI }

// getOpenAPI is GET /v1/openapi.json. It needs no key: it describes the
// API, not anything in it.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	writeEncoded(w, http.StatusOK, openAPI)
}
