package archtest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	maxFileLines = 500
	maxFuncLines = 70 // a declaration's first to last line
)

// skipDirs are directories, relative to the module, that are not part of
// the main module's code: bench/openapi-libs is a separate module.
var skipDirs = []string{"bench/openapi-libs"}

// allowedFuncs are the functions over maxFuncLines that may stay for now,
// named "dir/file.go:Func" (a method as "Type.Method"). It is empty, and
// should stay so: extract helpers instead of adding an entry.
var allowedFuncs []string

// TestSizes parses every non-test, non-generated Go file of the module and
// fails on each file over maxFileLines lines and each function over
// maxFuncLines lines, listing every offender; it also fails on an allowlist
// entry that names no long function, so that the list only shrinks.
func TestSizes(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || slices.Contains(skipDirs, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		file, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(file) {
			return nil
		}
		if n := lineCount(src); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d: split it by concept", rel, n, maxFileLines)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n <= maxFuncLines {
				continue
			}
			name := rel + ":" + funcName(fn)
			if allow(seen, name, allowedFuncs) {
				continue
			}
			t.Errorf("%s: %d lines, over %d: extract helpers", name, n, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range allowedFuncs {
		if !seen[name] {
			t.Errorf("allowedFuncs names %s, which is gone or now short enough: remove the entry", name)
		}
	}
}

// allow reports whether list names name, and marks it seen.
func allow(seen map[string]bool, name string, list []string) bool {
	if !slices.Contains(list, name) {
		return false
	}
	seen[name] = true
	return true
}

// funcName names a function "Func" and a method "Type.Method".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// lineCount counts lines as wc -l does, plus a last line without a newline.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}
