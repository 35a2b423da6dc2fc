package docs

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/server"
)

// notInOpenAPI are the routes the OpenAPI document leaves out: MCP's own
// transport and the dashboard's static files.
var notInOpenAPI = map[string]bool{"/mcp": true, "GET /assets/": true}

// refPattern finds the schema references of the document.
var refPattern = regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`)

// The OpenAPI document served at /v1/openapi.json describes exactly the
// routes the server and `toolgate serve` register, and its references
// resolve.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	raw := server.OpenAPI()
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("server/openapi.json is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	described := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			described[strings.ToUpper(method)+" "+path] = true
		}
	}
	registered := map[string]string{}
	for _, rt := range registeredRoutes(t) {
		if !notInOpenAPI[rt.pattern] {
			registered[strings.ReplaceAll(rt.pattern, "{$}", "")] = rt.file
		}
	}
	for route, file := range registered {
		if !described[route] {
			t.Errorf("route %q (registered in %s) is not in server/openapi.json: add it under \"paths\"", route, file)
		}
	}
	var extra []string
	for route := range described {
		if _, ok := registered[route]; !ok {
			extra = append(extra, route)
		}
	}
	sort.Strings(extra)
	for _, route := range extra {
		t.Errorf("server/openapi.json describes %q, which no file registers", route)
	}
	for _, ref := range refPattern.FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("server/openapi.json refers to #/components/schemas/%s, which it does not define", ref[1])
		}
	}
}
