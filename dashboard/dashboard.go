// Package dashboard serves toolgate's one-page dashboard from the binary:
// embedded HTML, CSS and JavaScript, with uPlot vendored (MIT, see
// assets/vendor/uPlot.LICENSE). It works offline: no CDN, no build step.
//
// The page reads the HTTP API (/v1/summary, /v1/stats, /v1/stats/series,
// /v1/alerts, /v1/breakers, /v1/runs, /v1/runs/{id}, /v1/approvals) and refreshes
// every few seconds. With API keys configured it shows a sign-in box and
// keeps the key in the browser's sessionStorage; without a key it sends
// nothing but GET /healthz.
package dashboard

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"

	"github.com/toolgate/toolgate/breaker"
)

//go:embed assets
var assets embed.FS

// Patterns are the routes Handler answers, to mount as public routes: the
// page at /, /runs and /runs/{id} (the same page, which shows the runs list
// or one run from its URL, so that a run's page can be reloaded and
// shared), its files under /assets/ and its icon.
var Patterns = []string{"GET /{$}", "GET /runs", "GET /runs/{id}", "GET /assets/", "GET /favicon.ico"}

// Handler serves the page at / (and at /runs and /runs/{id}), its files
// under /assets/ and its icon at /favicon.ico too (the page declares
// /assets/favicon.svg; the fixed path is for clients that ask for it
// anyway).
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServer(http.FS(sub))
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", cacheable(http.StripPrefix("/assets/", files)))
	mux.Handle("GET /favicon.ico", cacheable(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		icon, err := assets.ReadFile("assets/favicon.svg")
		if err != nil {
			http.Error(w, "icon missing", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(icon)
	})))
	index := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, err := assets.ReadFile("assets/index.html")
		if err != nil {
			http.Error(w, "dashboard missing", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		w.Write(page)
	})
	mux.Handle("GET /{$}", index)
	mux.Handle("GET /runs", index)
	mux.Handle("GET /runs/{id}", index)
	return unframeable(mux)
}

// unframeable forbids other origins (and this one) to frame the dashboard,
// so no page can overlay its approve buttons (clickjacking): CSP
// frame-ancestors for current browsers, X-Frame-Options for older ones.
func unframeable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

func cacheable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

// BreakerState is one circuit breaker as the dashboard shows it.
type BreakerState struct {
	Dependency          string `json:"dependency"`
	State               string `json:"state"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	RetryInMS           int64  `json:"retry_in_ms"`
}

// Breakers answers GET /v1/breakers with this process's circuit breakers
// (they are per replica, as in Envoy).
func Breakers(snapshots func() []breaker.Snapshot) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := []BreakerState{}
		for _, s := range snapshots() {
			out = append(out, BreakerState{Dependency: s.Name, State: s.State.String(),
				ConsecutiveFailures: s.ConsecutiveFailures, RetryInMS: s.RetryIn.Milliseconds()})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"breakers": out})
	})
}
