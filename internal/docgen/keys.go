// Package docgen keeps the user documentation in docs/ true to the code:
// it lists every config key from the config package's structs and their doc
// comments (ConfigKeys), renders the key reference of docs/config.md
// (RenderKeys, Splice), and lists the outcome codes of package types
// (Codes). cmd configdoc (go generate ./config) rewrites docs/config.md; the
// tests of package docs fail when a key, a code or a route has no
// documentation.
package docgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Key is one config key, found by walking the yaml tags reachable from
// config.Config.
type Key struct {
	// Path is the key's place in the file: "tools.<name>.timeout.read";
	// <name> stands for a name the user chooses, [] for any list item.
	Path string
	// Type is what the value is, in YAML terms ("duration", "list of ...").
	Type string
	// Default is the default taken from the doc comment ("Default ..."),
	// "required" when it says "Required", or "".
	Default string
	// Doc is the field's doc comment on one line.
	Doc string
	// Field is the Go field, "Tool.Timeout"; File the file it is declared in.
	Field, File string
}

// Problem is a field that cannot be documented: it has no doc comment.
type Problem struct {
	Key, Field, File string
}

// Error says what is missing and where to add it.
func (p Problem) Error() string {
	return fmt.Sprintf("config key %s (field %s in %s) has no doc comment: write one above the field (what it does, then \"Default X.\" or \"Required.\"), then run `go generate ./config`", p.Key, p.Field, p.File)
}

// ParseFiles parses the Go files of dir but its tests, in name order.
func ParseFiles(fset *token.FileSet, dir string, mode parser.Mode) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, mode)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// ConfigKeys parses the Go package in dir (the config package) and returns
// every key reachable from its Config struct, in file order, and a problem
// for each field without a doc comment.
func ConfigKeys(dir string) ([]Key, []Problem, error) {
	fset := token.NewFileSet()
	files, err := ParseFiles(fset, dir, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	w := &walker{fset: fset, structs: map[string]*ast.StructType{}, typeDocs: map[string]string{}}
	{
		for _, f := range files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if st, ok := ts.Type.(*ast.StructType); ok {
						w.structs[ts.Name.Name] = st
					}
				}
			}
		}
	}
	if w.structs["Config"] == nil {
		return nil, nil, fmt.Errorf("docgen: no Config struct in %s", dir)
	}
	w.walk("Config", "", map[string]bool{})
	return w.keys, w.problems, nil
}

type walker struct {
	fset     *token.FileSet
	structs  map[string]*ast.StructType
	typeDocs map[string]string
	keys     []Key
	problems []Problem
}

func (w *walker) walk(typeName, prefix string, seen map[string]bool) {
	if seen[typeName] {
		return // a recursive type: documented once
	}
	seen[typeName] = true
	defer delete(seen, typeName)
	for _, field := range w.structs[typeName].Fields.List {
		if field.Tag == nil || len(field.Names) == 0 {
			continue
		}
		tag, _ := strconv.Unquote(field.Tag.Value)
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		goName := field.Names[0].Name
		path := prefix + name
		file := filepath.ToSlash(filepath.Join("config", filepath.Base(w.fset.Position(field.Pos()).Filename)))
		k := Key{Path: path, Field: typeName + "." + goName, File: file}
		doc := ""
		if field.Doc != nil {
			doc = field.Doc.Text()
		} else if field.Comment != nil {
			doc = field.Comment.Text()
		}
		doc = strings.Join(strings.Fields(doc), " ")
		if doc == "" {
			w.problems = append(w.problems, Problem{Key: path, Field: k.Field, File: file})
		}
		// "Listen is ..." reads "`listen` is ..." in the user's terms.
		for _, sep := range []string{" ", ", "} {
			if rest, ok := strings.CutPrefix(doc, goName+sep); ok {
				doc = "`" + name + "`" + sep + rest
			}
		}
		// "`found` (verify) is ..." on a struct shared by several keys
		// (owner and verify) applies under verify only.
		if m := onlyUnder.FindStringSubmatch(doc); m != nil && !strings.HasSuffix(prefix, "."+m[1]+".") {
			continue
		}
		k.Doc = doc
		k.Default = defaultOf(doc)
		typ, inner, sub := w.describe(field.Type)
		k.Type = typ
		if k.Default == "" && typ == "boolean" {
			k.Default = "false"
		}
		w.keys = append(w.keys, k)
		if inner != "" {
			w.walk(inner, path+sub, seen)
		}
	}
}

// describe names a field's type for users and, when the value holds
// further keys, the struct to walk and the path step into it.
func (w *walker) describe(e ast.Expr) (typ, inner, sub string) {
	switch t := e.(type) {
	case *ast.StarExpr:
		return w.describe(t.X)
	case *ast.Ident:
		if _, ok := w.structs[t.Name]; ok {
			return "mapping", t.Name, "."
		}
		return scalar(t.Name), "", ""
	case *ast.SelectorExpr:
		switch t.Sel.Name {
		case "Effect":
			return "string", "", ""
		case "Principal":
			return "mapping (a principal)", "", ""
		}
		return "mapping", "", ""
	case *ast.ArrayType:
		et, ei, es := w.describe(t.Elt)
		if ei != "" {
			return "list of mappings", ei, "[]."
		}
		_ = es
		return "list of " + plural(et), "", ""
	case *ast.MapType:
		vt, vi, _ := w.describe(t.Value)
		if vi != "" {
			return "mapping of names to mappings", vi, ".<name>."
		}
		if id, ok := t.Value.(*ast.Ident); ok && id.Name == "any" {
			return "mapping (JSON Schema)", "", ""
		}
		return "mapping of names to " + plural(vt), "", ""
	case *ast.InterfaceType:
		return "any", "", ""
	}
	return "value", "", ""
}

func scalar(goType string) string {
	switch goType {
	case "string":
		return "string"
	case "int", "int64", "int32":
		return "integer"
	case "float64", "float32":
		return "number"
	case "bool":
		return "boolean"
	case "Duration":
		return "duration"
	case "any":
		return "any"
	}
	return goType
}

func plural(t string) string {
	switch {
	case strings.HasPrefix(t, "mapping"):
		return "mappings"
	case strings.HasSuffix(t, "s"):
		return t
	}
	return t + "s"
}

// onlyUnder finds "`key` (parent) ..." or "`key` (parent, ...)".
var onlyUnder = regexp.MustCompile("^`[a-z_]+` \\(([a-z_]+)[,)]")

// defaultRE finds "Default X." (X may hold dots inside numbers, "0.2").
var defaultRE = regexp.MustCompile(`\bDefault(?: \([^)]*\))?:? (.+?)\.(?:\s|$)`)

// requiredRE finds "Required" as a word (the sentence may go on).
var requiredRE = regexp.MustCompile(`\bRequired\b`)

func defaultOf(doc string) string {
	if m := defaultRE.FindStringSubmatch(doc); m != nil {
		return m[1]
	}
	if requiredRE.MatchString(doc) {
		return "required"
	}
	return ""
}

// Paths returns the keys' paths, sorted.
func Paths(keys []Key) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.Path)
	}
	sort.Strings(out)
	return out
}
