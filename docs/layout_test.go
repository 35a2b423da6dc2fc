package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDesignLayoutNamesEveryPackage: design.md's layout table names every
// package folder of the module, or a folder above it, and every path it
// names exists, so that the page a contributor reads first cannot
// drift from the tree.
func TestDesignLayoutNamesEveryPackage(t *testing.T) {
	page := read(t, "design.md")
	start := strings.Index(page, "## Layout")
	end := strings.Index(page[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("design.md has no Layout section")
	}
	named := map[string]bool{}
	for _, line := range strings.Split(page[start:start+1+end], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			p := strings.TrimSuffix(m[1], "/")
			named[p] = true
			if _, err := os.Stat(filepath.Join("..", p)); err != nil {
				t.Errorf("design.md's layout names %s, which does not exist", m[1])
			}
		}
	}
	covered := func(dir string) bool {
		for p := range named {
			if dir == p || strings.HasPrefix(dir, p+"/") {
				return true
			}
		}
		return false
	}
	for _, dir := range packageDirs(t) {
		if !covered(dir) {
			t.Errorf("design.md's layout has no row for %s/ (nor for a folder above it)", dir)
		}
	}
}

// packageDirs lists the folders (from the repository root) that hold
// non-test Go files, but docs/, examples/ and testdata.
func packageDirs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		name := d.Name()
		if d.IsDir() {
			if rel == "docs" || rel == "examples" || name == "testdata" || name == "node_modules" ||
				(rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"))) {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." || seen[dir] || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		seen[dir] = true
		dirs = append(dirs, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("found %d package folders; the walk is wrong", len(dirs))
	}
	return dirs
}
