package docs

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// routePattern finds the routes registered with the server.
var routePattern = regexp.MustCompile(`Pattern: "([^"]+)"`)

// Every route the server and `toolgate serve` register has a section in
// docs/http-api.md.
func TestRoutesDocumented(t *testing.T) {
	doc := read(t, "http-api.md")
	for _, dir := range []string{"../server", "../cmd/toolgate"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, m := range routePattern.FindAllStringSubmatch(read(t, f), -1) {
				route := strings.ReplaceAll(m[1], "{$}", "")
				heading := "### `" + route + "`"
				if !strings.Contains(doc, heading+"\n") {
					t.Errorf("route %q (registered in %s) is not documented in docs/http-api.md: add a section headed %q with its request, its answer and its status codes", m[1], filepath.ToSlash(f[3:]), heading)
				}
			}
		}
	}
}
