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
	for _, rt := range registeredRoutes(t) {
		route := strings.ReplaceAll(rt.pattern, "{$}", "")
		heading := "### `" + route + "`"
		if !strings.Contains(doc, heading+"\n") {
			t.Errorf("route %q (registered in %s) is not documented in docs/http-api.md: add a section headed %q with its request, its answer and its status codes", rt.pattern, rt.file, heading)
		}
	}
}

// registeredRoute is a route pattern the server or `toolgate serve`
// registers, and the file (from the repository's root) that does.
type registeredRoute struct{ pattern, file string }

// registeredRoutes reads the route patterns of server/ and cmd/toolgate/
// (routePattern over their non-test files). Fewer than ten means the
// pattern that finds them is stale.
func registeredRoutes(t *testing.T) []registeredRoute {
	t.Helper()
	var out []registeredRoute
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
				out = append(out, registeredRoute{m[1], filepath.ToSlash(f[3:])})
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d routes in server/ and cmd/toolgate/; the pattern that finds them is stale", len(out))
	}
	return out
}
