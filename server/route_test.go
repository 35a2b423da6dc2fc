package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The mux's redirect of an unclean path goes out as it is; its 404 and
// 405 are answered in the envelope (TestGatewayErrors), and a route's own
// 404 stays the route's.
func TestRouteFallbacks(t *testing.T) {
	b := setup(t, setupOpts{})
	h := b.srv.Handler()
	tests := []struct {
		name, method, path string
		status             int
		location, says     string
	}{
		{"unclean path", "GET", "/v1//tools", http.StatusTemporaryRedirect, "/v1/tools", ""},
		{"no route", "GET", "/v1/nothing", http.StatusNotFound, "", "there is no endpoint GET /v1/nothing"},
		{"a route's own 404", "GET", "/v1/runs/nope", http.StatusNotFound, "", "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			req.Header.Set("Authorization", "Bearer "+alphaKey)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Header().Get("Location") != tt.location {
				t.Fatalf("%s %s: %d Location %q, want %d %q", tt.method, tt.path, rec.Code, rec.Header().Get("Location"), tt.status, tt.location)
			}
			if tt.says != "" {
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(rec.Body.String(), tt.says) {
					t.Errorf("body %s, want it to say %q", rec.Body, tt.says)
				}
			}
			if tt.name == "a route's own 404" && strings.Contains(rec.Body.String(), "no endpoint") {
				t.Errorf("a route's 404 was answered as no route: %s", rec.Body)
			}
		})
	}
}
