package config

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolgate/toolgate/expr"
)

// Position is a place in the config file, 1-based; the zero Position is
// unknown (a config built in Go).
type Position struct {
	Line, Column int
}

// placeholder is one ${NAME} in a value, where it was written.
type placeholder struct {
	name string
	pos  Position
}

// docIndex knows where each key path of the file was written
// (tools.issue_refund.rules[0].deny), so that a problem found after
// decoding still names its line.
type docIndex struct {
	pos map[string]Position
}

// Locate returns where key (a dotted path such as
// tools.issue_refund.rules[0].deny) was written in the config file: the
// key itself, or the nearest enclosing key that was written when the key
// is absent (a missing required key is reported at its parent). The zero
// Position when the config was not read from a file.
func (c *Config) Locate(key string) Position {
	if c.index == nil {
		return Position{}
	}
	for key != "" {
		if p, ok := c.index.pos[key]; ok {
			return p
		}
		key = parentKey(key)
	}
	return Position{}
}

// parentKey drops the last segment of a dotted key path.
func parentKey(key string) string {
	i := strings.LastIndexAny(key, ".[")
	if i < 0 {
		return ""
	}
	return key[:i]
}

// walker reads the parsed YAML before it is decoded: it records where
// every key path was written, the ${NAME} placeholders, and the keys that
// are given twice or that no field of the config takes (with the likely
// one), so that all of them are reported in one run.
type walker struct {
	index        *docIndex
	problems     []*Problem
	placeholders []placeholder
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// walk visits n, written at path, which decodes into a value of type t
// (nil: anything, such as a schema or an unknown key's value).
func (w *walker) walk(n ast.Node, path string, t reflect.Type) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(textUnmarshaler) {
		t = nil // a scalar with its own syntax (a duration)
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		w.mapping(n.Values, path, t)
	case *ast.MappingValueNode:
		w.mapping([]*ast.MappingValueNode{n}, path, t)
	case *ast.SequenceNode:
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for i, v := range n.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			w.index.pos[p] = position(v)
			w.walk(v, p, elem)
		}
	case *ast.AnchorNode:
		w.walk(n.Value, path, t)
	case *ast.TagNode:
		w.walk(n.Value, path, t)
	case *ast.StringNode:
		for _, m := range envRef.FindAllStringSubmatch(n.Value, -1) {
			w.placeholders = append(w.placeholders, placeholder{m[1], position(n)})
		}
	}
}

// mapping visits the keys of one mapping.
func (w *walker) mapping(values []*ast.MappingValueNode, path string, t reflect.Type) {
	fields := structFields(t)
	seen := map[string]Position{}
	for _, mv := range values {
		name := keyText(mv.Key)
		p := name
		if path != "" {
			p = path + "." + name
		}
		at := position(mv.Key)
		if first, dup := seen[name]; dup {
			w.bad(p, at, "%q is given twice in this mapping (first on line %d); remove one", name, first.Line)
			continue
		}
		seen[name] = at
		w.index.pos[p] = at
		var sub reflect.Type
		switch {
		case fields != nil:
			f, ok := fields[name]
			if !ok {
				w.unknown(p, at, name, fields)
				continue
			}
			sub = f
		case t != nil && t.Kind() == reflect.Map:
			sub = t.Elem()
		}
		w.walk(mv.Value, p, sub)
	}
}

// unknown reports a key that no field takes, with the likely one.
func (w *walker) unknown(path string, at Position, name string, fields map[string]reflect.Type) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if s := expr.Suggest(name, keys); s != "" {
		w.bad(path, at, "unknown key %q; did you mean %s?", name, s)
		return
	}
	w.bad(path, at, "unknown key %q (known here: %s)", name, strings.Join(keys, ", "))
}

func (w *walker) bad(path string, at Position, format string, args ...any) {
	w.problems = append(w.problems, &Problem{Key: path, Pos: at, Why: fmt.Sprintf(format, args...)})
}

// structFields maps the YAML names of t's fields to their types; nil when
// t is not a struct.
func structFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" {
			tag = f.Tag.Get("json")
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// keyText is a mapping key as the decoder sees it.
func keyText(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

// position is where n starts.
func position(n ast.Node) Position {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return Position{}
	}
	p := n.GetToken().Position
	return Position{Line: p.Line, Column: p.Column}
}
