package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// routePattern finds the route patterns registered in source: Mount
// literals and mux registrations.
var routePattern = regexp.MustCompile(`Pattern: "([^"]+)"`)

// The route table of doc.go lists every route the server and `toolgate
// serve` register: each Pattern in server/ and cmd/toolgate/ has its line
// (method and path; a pattern without a method is listed as ANY).
func TestDocListsEveryRoute(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		fields := strings.Fields(strings.TrimPrefix(line, "//"))
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "/") {
			table[fields[0]+" "+fields[1]] = true
		}
	}
	var files []string
	for _, dir := range []string{".", filepath.Join("..", "cmd", "toolgate")} {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
	}
	found := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
			found++
			method, path, ok := strings.Cut(m[1], " ")
			if !ok {
				method, path = "ANY", m[1]
			}
			path = strings.TrimSuffix(path, "{$}")
			if !table[method+" "+path] {
				t.Errorf("%s registers %q, which server/doc.go's route table does not list (want a line %q)", file, m[1], method+" "+path)
			}
		}
	}
	if found < 15 {
		t.Errorf("found only %d route patterns: has the registration changed shape?", found)
	}
}
