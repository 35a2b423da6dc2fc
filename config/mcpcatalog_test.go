package config

import (
	"strings"
	"testing"
)

// TestMCPCatalogueSelection: an import selects resources by URI or name and
// prompts by name, none by default; a key sees every imported one unless
// its lists narrow it.
func TestMCPCatalogueSelection(t *testing.T) {
	im := &Import{Resources: []string{"file:///docs/*", "changelog"}, Prompts: []string{"sum*"}}
	key := &Key{Resources: []string{"file:///docs/a.md", "docs_order"}, Prompts: []string{"docs_summarise"}}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"a URI under the glob, * crossing /", im.SelectsResource("file:///docs/x/y.md", "y"), true},
		{"a resource by its name", im.SelectsResource("mem://1", "changelog"), true},
		{"a resource the import does not name", im.SelectsResource("file:///etc/passwd", "passwd"), false},
		{"a prompt by glob", im.SelectsPrompt("summarise"), true},
		{"a prompt the import does not name", im.SelectsPrompt("audit"), false},
		{"no resources: none", (&Import{Tools: []string{"*"}}).SelectsResource("file:///a", "a"), false},
		{"no prompts: none", (&Import{}).SelectsPrompt("a"), false},
		{"a key's URI", key.SeesResource("file:///docs/a.md", "docs_a"), true},
		{"a key's template by its served name", key.SeesResource("mem://orders/{id}", "docs_order"), true},
		{"outside the key's list", key.SeesResource("file:///docs/b.md", "docs_b"), false},
		{"a key's prompt", key.SeesPrompt("docs_summarise"), true},
		{"a prompt outside the key's list", key.SeesPrompt("docs_audit"), false},
		{"a key without lists sees all", (&Key{}).SeesResource("x://y", "") && (&Key{}).SeesPrompt("p"), true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestMCPCatalogueProblems: malformed globs and resources on a dependency
// that is not an MCP server are problems naming the key.
func TestMCPCatalogueProblems(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"a malformed import glob", `
dependencies:
  docs:
    mcp: {url: http://127.0.0.1:9300/mcp}
    import: {tools: ["*"], resources: ["file:///[a"]}
`, "dependencies.docs.import.resources[0]"},
		{"resources from an OpenAPI document", `
dependencies:
  pets:
    base_url: http://127.0.0.1:9200
    openapi: pets.json
    import: {operations: ["*"], prompts: ["*"]}
`, "resources and prompts come from an MCP server"},
		{"a key's malformed prompts glob", `
auth:
  keys:
    - {name: bot, key: a-key-of-16-chars-or-more, prompts: ["[z"]}
dependencies:
  docs:
    mcp: {url: http://127.0.0.1:9300/mcp}
    import: {tools: ["*"]}
`, "auth.keys[0].prompts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("store: memory"+tt.yaml), "", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want a problem containing %q, got %v", tt.want, err)
			}
		})
	}
}
