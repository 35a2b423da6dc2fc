package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// doubling is the document: schema sI is an object of two
// properties that both $ref sI+1, to depth; one operation takes s0.
func doubling(depth int) string {
	schemas := map[string]any{fmt.Sprintf("s%d", depth): map[string]any{"type": "string"}}
	for i := range depth {
		next := map[string]any{"$ref": fmt.Sprintf("#/components/schemas/s%d", i+1)}
		schemas[fmt.Sprintf("s%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"a": next, "b": next}}
	}
	doc := map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "bomb", "version": "1"},
		"components": map[string]any{"schemas": schemas},
		"paths": map[string]any{"/x": map[string]any{"post": map[string]any{"operationId": "bomb",
			"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/s0"}}}}}},
			"/ok": map[string]any{"get": map[string]any{"operationId": "ok"}}}}
	b, _ := json.Marshal(doc)
	return string(b)
}

// TestRefBombSkipped: the doubling document at depth 16 (65,536 copies
// once expanded) is read at once; its operation is skipped with the
// reason and the others come in.
func TestRefBombSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bomb.json")
	if err := writeFile(path, doubling(16)); err != nil {
		t.Fatal(err)
	}
	doc, err := Load(t.Context(), &config.Dependency{Name: "d", OpenAPI: path, Import: &config.Import{}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Tools) != 1 || doc.Tools[0].Name != "ok" {
		t.Fatalf("tools: %+v", doc.Tools)
	}
	if len(doc.Report.Skipped) != 1 || !contains(doc.Report.Skipped[0].Why, "more than 200000 parts") {
		t.Fatalf("skipped: %+v", doc.Report.Skipped)
	}
}

// TestRefOrigins: a document served by URL may $ref its own origin; a
// $ref to another origin (here another local server: loopback is the
// SSRF) is refused unless openapi_ref_origins names it; a redirect is not
// followed.
func TestRefOrigins(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"type": "object", "properties": {"secret": {"type": "string"}}}`))
	}))
	defer other.Close()
	var base string
	docWith := func(ref string) string {
		return `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/x": {"post": {"operationId": "x",
			"requestBody": {"content": {"application/json": {"schema": {"$ref": "` + ref + `"}}}}}}}}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same.json":
			w.Write([]byte(docWith("schema.json")))
		case "/schema.json":
			w.Write([]byte(`{"type": "object"}`))
		case "/other.json":
			w.Write([]byte(docWith(other.URL + "/s.json")))
		case "/moved.json":
			http.Redirect(w, r, other.URL+"/s.json", http.StatusFound)
		}
	}))
	defer srv.Close()
	base = srv.URL
	for _, tt := range []struct {
		doc     string
		origins []string
		want    string // "" means loaded
	}{
		{"/same.json", nil, ""},
		{"/other.json", nil, "add it to openapi_ref_origins"},
		{"/other.json", []string{other.URL}, ""},
		{"/moved.json", nil, "status 302"},
	} {
		d := &config.Dependency{Name: "d", OpenAPI: base + tt.doc, OpenAPIRefOrigins: tt.origins, Import: &config.Import{}}
		_, err := Load(t.Context(), d, Options{})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %v: %v", tt.doc, tt.origins, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %v: err = %v, want %q", tt.doc, tt.origins, err, tt.want)
		}
	}
}
