package toolsource_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/toolsource"
	"github.com/toolgate/toolgate/types"
)

// plainConfig declares one Go-function tool and no source.
func plainConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"echo": {Description: "Answers its arguments.", Effect: types.EffectRead,
			Func: func(ctx context.Context, args json.RawMessage) (any, error) { return args, nil }},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Sources opened on a config without any source pass the config and the
// executor through; a reload then applies a plain config as it is, reads
// the documents of a config that adds one, and refuses one that adds an
// MCP server (connected only when toolgate starts) without applying it.
func TestSourcesWithoutImportsReload(t *testing.T) {
	cfg := plainConfig(t)
	s, merged, exec, err := toolsource.Open(t.Context(), cfg, toolsource.Options{})
	if err != nil || merged != cfg || exec != nil || s.Pool() != nil {
		t.Fatalf("Open = %v, %p (want %p), %v, pool %v", err, merged, cfg, exec, s.Pool())
	}
	defer s.Close()
	document, err := filepath.Abs(filepath.Join("..", "testdata", "openapi", "petstore", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dep     *config.Dependency
		applied []string // the tools apply saw; nil: not called
		err     string
	}{
		{"plain", nil, []string{"echo"}, ""},
		{"adds a document", &config.Dependency{BaseURL: "http://127.0.0.1:1/api", OpenAPI: document,
			Import: &config.Import{Operations: []string{"listPets"}}}, []string{"echo", "listPets"}, ""},
		{"adds an MCP server", &config.Dependency{MCP: &config.MCP{URL: "http://127.0.0.1:1/mcp"},
			Import: &config.Import{}}, nil, "adds MCP servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := plainConfig(t)
			if tc.dep != nil {
				next.Dependencies = map[string]*config.Dependency{"added": tc.dep}
				if err := next.Normalize(); err != nil {
					t.Fatal(err)
				}
			}
			var applied []string
			err := s.Reload(next, func(c *config.Config) error {
				applied = c.ToolNames()
				return nil
			})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Reload: %v, want %q", err, tc.err)
			}
			if strings.Join(applied, ",") != strings.Join(tc.applied, ",") {
				t.Errorf("applied %v, want %v", applied, tc.applied)
			}
		})
	}
}
