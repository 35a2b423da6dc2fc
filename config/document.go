package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// parseDocument parses the YAML text into the node of its one document.
// Duplicate keys are left to the walker, which reports all of them; a
// syntax error is one problem at its position, with no excerpt of the
// text (the file may not be a config at all).
func parseDocument(raw []byte) (ast.Node, *Problem) {
	file, err := parser.ParseBytes(raw, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, syntaxProblem(err)
	}
	var docs []ast.Node
	for _, d := range file.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, &Problem{Why: "is empty: a toolgate config is a mapping with dependencies: and tools:"}
	case len(docs) > 1:
		return nil, &Problem{Pos: position(docs[1]), Why: "holds more than one YAML document; a toolgate config is one"}
	}
	switch docs[0].(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return docs[0], nil
	}
	return nil, &Problem{Pos: position(docs[0]), Why: "is not a toolgate config: its top level must be a mapping with keys such as dependencies: and tools:"}
}

// syntaxProblem turns a YAML error into a Problem at its position, with
// goccy's message only.
func syntaxProblem(err error) *Problem {
	var ye yaml.Error
	if errors.As(err, &ye) {
		p := &Problem{Why: "YAML: " + ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			p.Pos = Position{Line: tk.Position.Line, Column: tk.Position.Column}
		}
		return p
	}
	return &Problem{Why: "YAML: " + strings.Join(strings.Fields(err.Error()), " ")}
}

// decodeProblem is a decoding error (a string where a number goes) at its
// position, keyed by the nearest path the walker recorded.
func decodeProblem(err error) *Problem {
	p := syntaxProblem(err)
	p.Why = strings.TrimPrefix(p.Why, "YAML: ")
	return p
}

// problems files, locates, redacts and orders every problem found so far:
// ps, and those joined in err. It returns nil when there are none.
func (c *Config) problems(ps []*Problem, err error) error {
	if err != nil {
		var j interface{ Unwrap() []error }
		errs := []error{err}
		if errors.As(err, &j) {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			var p *Problem
			if !errors.As(e, &p) {
				p = &Problem{Why: e.Error()}
			}
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	for _, p := range ps {
		c.Place(p)
	}
	SortProblems(ps)
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Place fills in what p lacks: the file, the position of its key, and
// ${VAR} instead of any variable's value in its text.
func (c *Config) Place(p *Problem) {
	if p.File == "" {
		p.File = c.Path
	}
	if p.Pos.Line == 0 && p.Key != "" {
		p.Pos = c.Locate(p.Key)
	}
	p.Why = c.Redact(p.Why)
}

// SortProblems orders problems as the file reads: by line, then column;
// problems with no position come first, in the order found.
func SortProblems(ps []*Problem) {
	slices.SortStableFunc(ps, func(a, b *Problem) int {
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		return a.Pos.Column - b.Pos.Column
	})
}

// Redact replaces every value of a ${VAR} the config used with ${VAR}, so
// that a message quoting a configured value (a URL with a token in it)
// does not carry the secret.
func (c *Config) Redact(s string) string {
	for _, name := range sortedKeys(c.secrets) {
		if v := c.secrets[name]; len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "${"+name+"}")
		}
	}
	return s
}

// expandStrings applies f to every string the decoded config holds (struct
// fields, map values, list items, strings inside schemas).
func expandStrings(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(f(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			expandStrings(v.Elem(), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				expandStrings(v.Field(i), f)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			expandStrings(v.Index(i), f)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			val := iter.Value()
			if s, ok := expandedAny(val, f); ok {
				v.SetMapIndex(iter.Key(), s)
				continue
			}
			cp := reflect.New(val.Type()).Elem()
			cp.Set(val)
			expandStrings(cp, f)
			v.SetMapIndex(iter.Key(), cp)
		}
	case reflect.Interface:
		if s, ok := expandedAny(v, f); ok && v.CanSet() {
			v.Set(s)
		} else if !v.IsNil() {
			expandStrings(v.Elem(), f)
		}
	}
}

// expandedAny returns f of the string an interface value holds; ok is
// false when it holds something else.
func expandedAny(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	if v.Kind() == reflect.Interface && !v.IsNil() && v.Elem().Kind() == reflect.String {
		out := reflect.New(v.Type()).Elem()
		out.Set(reflect.ValueOf(f(v.Elem().String())))
		return out, true
	}
	if v.Kind() == reflect.String {
		return reflect.ValueOf(f(v.String())).Convert(v.Type()), true
	}
	return reflect.Value{}, false
}

// String formats "line:column".
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }
