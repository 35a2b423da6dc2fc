package execute

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
)

// epoch is the fake clock's time in tests.
var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// bundle is what setup returns: an executor on a fake clock and a test
// server on 127.0.0.1, both closed when the test ends.
type bundle struct {
	h      *HTTP
	clock  *clock.Fake
	server *httptest.Server
}

// setup starts handler on 127.0.0.1 and returns an executor for it.
func setup(t *testing.T, handler http.Handler) *bundle {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	clk := clock.NewFake(epoch)
	h := NewHTTP(HTTPOptions{Clock: clk})
	t.Cleanup(h.Close) // runs before server.Close
	return &bundle{h: h, clock: clk, server: server}
}

// httpAttempt is an attempt of a tool named like the method, against the
// dependency "payments" at baseURL.
func httpAttempt(baseURL, method, path string, args map[string]any) *Attempt {
	return &Attempt{
		Tool: &config.Tool{
			Name:       "tool",
			Dependency: "payments",
			Request:    &config.Request{Method: method, Path: path},
			Effect:     "write",
		},
		Dependency: &config.Dependency{Name: "payments", BaseURL: baseURL},
		Args:       args,
	}
}

// num is a json.Number, the form decoded arguments take.
func num(s string) json.Number { return json.Number(s) }

// jsonHandler answers every request with body.
func jsonHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	})
}
