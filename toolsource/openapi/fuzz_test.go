package openapi

import (
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// FuzzImport: whatever a document holds, reading it never panics, never
// fetches (a file document's $refs to URLs are refused), and every tool
// taken stays inside the bounds.
func FuzzImport(f *testing.F) {
	f.Add(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/x/{id}":{"get":{"operationId":"x","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}]}}}}`)
	f.Add(doubling(6))
	f.Add("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    post:\n      requestBody: {content: {application/json: {schema: {$ref: 'http://127.0.0.1:1/x.json'}}}}\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "doc.json")
		if err := writeFile(path, text); err != nil {
			t.Fatal(err)
		}
		doc, err := Load(t.Context(), &config.Dependency{Name: "d", OpenAPI: path, Import: &config.Import{}}, Options{})
		if err != nil {
			return
		}
		for _, tool := range doc.Tools {
			if len(tool.Description) > config.MaxDescriptionBytes {
				t.Fatalf("%s: description of %d bytes", tool.Name, len(tool.Description))
			}
			for _, s := range []map[string]any{tool.InputSchema, tool.OutputSchema} {
				if err := config.CheckSchemaBounds(s, 0); err != nil {
					t.Fatalf("%s: a schema past the bounds was taken: %v", tool.Name, err)
				}
			}
		}
	})
}
