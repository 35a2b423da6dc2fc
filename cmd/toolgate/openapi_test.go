package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// petstoreDir copies testdata/openapi/petstore into a temporary folder
// with its config edited by edit, and returns the config's path.
func petstoreDir(t *testing.T, edit func(string) string) string {
	t.Helper()
	t.Setenv("PETSTORE_URL", "http://127.0.0.1:9")
	t.Setenv("PETSTORE_TOKEN", "tok")
	src := filepath.Join("..", "..", "testdata", "openapi", "petstore")
	dir := t.TempDir()
	for _, name := range []string{"petstore.yaml", "schemas.yaml", "toolgate.yaml"} {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "toolgate.yaml" {
			raw = []byte(edit(string(raw)))
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "toolgate.yaml")
}

func TestCheckReportsOpenAPIImports(t *testing.T) {
	same := func(s string) string { return s }
	tests := []struct {
		name string
		edit func(string) string
		code int
		want []string
	}{
		{"imported and skipped", same, 0, []string{
			"7 operations, 6 imported, 1 skipped, 0 name collisions",
			"skipped uploadPhoto: the request body is image/png; toolgate sends JSON bodies only",
			"ok (6 tools"}},
		{"unknown operation", func(s string) string {
			return strings.Replace(s, `operations: ["*"]`, `operations: [listPets, listPotatoes]`, 1)
		}, 1, []string{`dependencies.petstore.import.operations: `, `has no operation "listPotatoes"`}},
		{"skipped operation named", func(s string) string {
			return strings.Replace(s, `operations: ["*"]`, `operations: ["*", uploadPhoto]`, 1)
		}, 1, []string{`operation "uploadPhoto" of`, "cannot be imported: the request body is image/png"}},
		{"override naming nothing", func(s string) string {
			return s + "  listPotatoes: {timeout: {read: 1s}}\n"
		}, 1, []string{"tools.listPotatoes: names no declared tool and no tool imported from petstore"}},
		{"a declared tool shadows an operation", func(s string) string {
			return strings.Replace(s, "  deletePet:\n", "  deletePet:\n    description: Declared in full.\n    dependency: petstore\n    request: {method: DELETE, path: /pets}\n", 1)
		}, 0, []string{"7 operations, 5 imported, 1 skipped, 1 name collisions", "collision deletePet: deletePet, tools.deletePet; the name stays tools.deletePet's"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "check", "--config", petstoreDir(t, tt.edit))
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestToolsShowTheirSource(t *testing.T) {
	cfg := petstoreDir(t, func(s string) string { return s })
	code, out, errOut := runCLI(t, "tools", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var list struct {
		Tools []struct {
			Name   string
			Effect string
			Source *struct{ Kind, Dependency, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tool := range list.Tools {
		if tool.Source == nil || tool.Source.Kind != "openapi" || tool.Source.Dependency != "petstore" || tool.Source.Name != tool.Name {
			t.Errorf("%s: source %+v", tool.Name, tool.Source)
		}
		found++
	}
	if found != 6 {
		t.Errorf("%d tools, want the 6 imported", found)
	}
}
