package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// serveRoute is one request to a route `toolgate serve` must answer, and
// what its answer must hold.
type serveRoute struct {
	pattern string // the Mount pattern it reaches, as written in the source
	method  string
	path    string
	body    string
	status  int
	says    string
}

// serveRoutes reach every subsystem's routes and the API's own that the
// subsystems depend on (approvals, the OpenAPI document).
var serveRoutes = []serveRoute{
	{pattern: "GET /v1/stats", method: "GET", path: "/v1/stats", status: 200, says: `"tools"`},
	{pattern: "GET /v1/stats/series", method: "GET", path: "/v1/stats/series?tool=issue_refund", status: 200, says: `"points"`},
	{pattern: "GET /v1/alerts", method: "GET", path: "/v1/alerts", status: 200, says: `"alerts"`},
	{pattern: "GET /metrics", method: "GET", path: "/metrics", status: 200, says: "toolgate_"},
	{pattern: "GET /v1/breakers", method: "GET", path: "/v1/breakers", status: 200, says: "["},
	{pattern: "GET /{$}", method: "GET", path: "/", status: 200, says: "<title>toolgate</title>"},
	{pattern: "GET /runs", method: "GET", path: "/runs", status: 200, says: "<title>toolgate</title>"},
	{pattern: "GET /runs/{id}", method: "GET", path: "/runs/r1", status: 200, says: "<title>toolgate</title>"},
	{pattern: "GET /assets/", method: "GET", path: "/assets/overview.js", status: 200, says: "/v1/stats"},
	{pattern: "GET /favicon.ico", method: "GET", path: "/favicon.ico", status: 200, says: "<svg"},
	{pattern: "/mcp", method: "POST", path: "/mcp", status: 200, says: `"serverInfo"`,
		body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
	{pattern: "GET /.well-known/oauth-protected-resource/mcp", method: "GET", path: "/.well-known/oauth-protected-resource/mcp", status: 200, says: `"resource"`},
	{pattern: "GET /.well-known/oauth-protected-resource", method: "GET", path: "/.well-known/oauth-protected-resource", status: 200, says: `"resource"`},
	{method: "GET", path: "/v1/approvals", status: 200, says: `"approvals"`},
	{method: "GET", path: "/v1/openapi.json", status: 200, says: `"openapi"`},
}

// `toolgate serve` mounts every subsystem: each route answers through its
// own handler (not the server's "no endpoint" 404).
func TestServeMountsEverySubsystem(t *testing.T) {
	cfg, _ := cliSetup(t)
	base, stderr, cancel, exit := serveInProcess(t, "--config", cfg, "--listen", "127.0.0.1:0")
	defer func() {
		http.DefaultClient.CloseIdleConnections()
		cancel()
		if code := <-exit; code != 0 {
			t.Errorf("serve exited %d:\n%s", code, stderr)
		}
	}()
	for _, r := range serveRoutes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.body != "" {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != r.status || !strings.Contains(string(body), r.says) {
				t.Errorf("%s %s: %d, want %d with %q: %.300s", r.method, r.path, resp.StatusCode, r.status, r.says, body)
			}
		})
	}
}

// Every route this package mounts has its line in serveRoutes, so that a
// new subsystem's routes are checked by the test above.
func TestServeRoutesCoverEveryMount(t *testing.T) {
	covered := map[string]bool{}
	for _, r := range serveRoutes {
		covered[r.pattern] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(`Pattern: "([^"]+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pattern.FindAllStringSubmatch(string(src), -1) {
			found++
			if !covered[m[1]] {
				t.Errorf("%s mounts %q, which serveRoutes does not request", f, m[1])
			}
		}
	}
	if found == 0 {
		t.Error("found no Mount patterns: has the wiring changed shape?")
	}
}
