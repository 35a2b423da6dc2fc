package docs

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/docgen"
	"github.com/toolgate/toolgate/types"
)

// codes returns the outcome codes declared in package types: the value and
// the constant's name.
func codes(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := docgen.ParseFiles(fset, "../types", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	{
		for _, f := range files {
			name := fset.File(f.Pos()).Name()
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					id, ok := vs.Type.(*ast.Ident)
					if !ok || id.Name != "Code" {
						continue
					}
					for i, n := range vs.Names {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(lit.Value)
							out[v] = n.Name + " in types/" + filepath.Base(name)
						}
					}
				}
			}
		}
	}
	// The default code of a rule's refusal is the config's, not a constant.
	out["rule_denied"] = "the default of rules[].code in config/load.go"
	return out
}

// Every outcome code has a section in docs/errors.md that says whether it
// is retryable, as the code says.
func TestErrorCodesDocumented(t *testing.T) {
	doc := read(t, "errors.md")
	all := codes(t)
	names := make([]string, 0, len(all))
	for c := range all {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		heading := "### `" + c + "`"
		_, section, ok := strings.Cut(doc, heading+"\n")
		if !ok {
			t.Errorf("error code %s (%s) has no section in docs/errors.md: add a heading %q with when it happens, \"Retryable: yes|no\", meta.next, and what the model is told to do", c, all[c], heading)
			continue
		}
		section, _, _ = strings.Cut(section, "\n### ")
		want := "Retryable: no"
		if types.Code(c).Retryable() {
			want = "Retryable: yes"
		}
		if !strings.Contains(section, want) {
			t.Errorf("docs/errors.md, section %s: it must say %q (types.Code(%q).Retryable())", heading, want, c)
		}
	}
}
