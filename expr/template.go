package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// Template is a text with {placeholders}, used for idempotency keys and rule
// messages. The placeholders are:
//
//	{name}                 a top-level argument (same as {args.name})
//	{args.x}, {args.x.y}   an argument, or a field inside one (a number
//	                       segment indexes an array: {args.items.0.sku})
//	{principal.id}
//	{principal.limits.x}
//	{principal.attrs.x}    an attribute, or a field inside one
//	{run_id} {call_id} {tool}
//
// "{{" and "}}" stand for literal braces. A Template is immutable and safe
// for concurrent use.
type Template struct {
	src   string
	parts []part
}

// part is a literal text or a placeholder.
type part struct {
	text string // literal text, or the placeholder as written (trimmed)
	ref  *placeholderRef
}

// placeholderRef says where a placeholder's value comes from.
type placeholderRef struct {
	root rootKind
	path []string // below the root: argument path, limit name, attr path
}

type rootKind int

const (
	rootArgs rootKind = iota
	rootPrincipalID
	rootPrincipalLimit
	rootPrincipalAttr
	rootRunID
	rootCallID
	rootTool
)

// placeholderHelp lists the valid forms, for parse errors.
const placeholderHelp = "use {arg}, {args.x}, {principal.id}, {principal.limits.x}, {principal.attrs.x}, {run_id}, {call_id} or {tool}"

// ParseTemplate parses s. An unknown placeholder, an empty one or an
// unmatched brace is an error that names it.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{src: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{' && strings.HasPrefix(s[i:], "{{"):
			lit.WriteByte('{')
			i += 2
		case c == '}' && strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte('}')
			i += 2
		case c == '}':
			return nil, fmt.Errorf("unmatched } at byte %d (write }} for a literal brace)", i)
		case c == '{':
			end := strings.IndexAny(s[i+1:], "{}")
			if end < 0 || s[i+1+end] != '}' {
				return nil, fmt.Errorf("unclosed { at byte %d (write {{ for a literal brace)", i)
			}
			name := strings.TrimSpace(s[i+1 : i+1+end])
			ref, err := parsePlaceholder(name)
			if err != nil {
				return nil, err
			}
			flush()
			t.parts = append(t.parts, part{text: name, ref: ref})
			i += end + 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return t, nil
}

// parsePlaceholder resolves the text inside braces.
func parsePlaceholder(name string) (*placeholderRef, error) {
	if name == "" {
		return nil, fmt.Errorf("empty placeholder {}: %s", placeholderHelp)
	}
	segs := strings.Split(name, ".")
	for _, s := range segs {
		if !validSegment(s) {
			return nil, fmt.Errorf("invalid placeholder {%s}: %s", name, placeholderHelp)
		}
	}
	unknown := fmt.Errorf("unknown placeholder {%s}: %s", name, placeholderHelp)
	switch segs[0] {
	case "run_id", "call_id", "tool":
		if len(segs) != 1 {
			return nil, unknown
		}
		return &placeholderRef{root: map[string]rootKind{"run_id": rootRunID, "call_id": rootCallID, "tool": rootTool}[segs[0]]}, nil
	case "args":
		if len(segs) < 2 {
			return nil, unknown
		}
		return &placeholderRef{root: rootArgs, path: segs[1:]}, nil
	case "principal":
		switch {
		case len(segs) == 2 && segs[1] == "id":
			return &placeholderRef{root: rootPrincipalID}, nil
		case len(segs) == 3 && segs[1] == "limits":
			return &placeholderRef{root: rootPrincipalLimit, path: segs[2:]}, nil
		case len(segs) >= 3 && segs[1] == "attrs":
			return &placeholderRef{root: rootPrincipalAttr, path: segs[2:]}, nil
		}
		return nil, unknown
	}
	if len(segs) != 1 {
		return nil, unknown
	}
	return &placeholderRef{root: rootArgs, path: segs}, nil
}

// validSegment accepts argument-like names: letters, digits, _ and -.
func validSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			return false
		}
	}
	return true
}

// String returns the template's source text.
func (t *Template) String() string { return t.src }

// Placeholders returns the placeholders in order of first appearance, as
// written inside the braces ("order_id", "args.amount", "run_id").
func (t *Template) Placeholders() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.ref != nil && !seen[p.text] {
			seen[p.text] = true
			out = append(out, p.text)
		}
	}
	return out
}

// Args returns the top-level argument names the template reads, in order of
// first appearance: both {order_id} and {args.order_id.x} read "order_id".
func (t *Template) Args() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.ref != nil && p.ref.root == rootArgs && !seen[p.ref.path[0]] {
			seen[p.ref.path[0]] = true
			out = append(out, p.ref.path[0])
		}
	}
	return out
}

// Render fills the placeholders from v. A string renders raw, a json.Number
// as its literal, null as "null", anything else as compact canonical JSON.
// A placeholder with no value is an error naming it; an empty run_id,
// call_id, tool or principal.id counts as no value.
func (t *Template) Render(v *Vars) (string, error) { return t.render(v, "") }

// RenderEscaped is Render for keys that must be injective (quota keys):
// inside each value, '%' and every character of the template's literal
// text are written as %XX, so "{principal.id}:{args.order_id}" renders
// alice:ORD and 1 as "alice%3AORD:1", and alice and ORD:1 as
// "alice:ORD%3A1". Placeholders must be separated by literal text (see
// Separated) for the whole key to be injective.
func (t *Template) RenderEscaped(v *Vars) (string, error) {
	special := "%"
	for _, p := range t.parts {
		if p.ref == nil {
			special += p.text
		}
	}
	return t.render(v, special)
}

// Separated reports whether literal text stands between every two
// placeholders ("{a}:{b}", not "{a}{b}").
func (t *Template) Separated() bool {
	for i := 1; i < len(t.parts); i++ {
		if t.parts[i].ref != nil && t.parts[i-1].ref != nil {
			return false
		}
	}
	return true
}

// render fills the placeholders; the characters of special in a value are
// written as %XX.
func (t *Template) render(v *Vars, special string) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.ref == nil {
			b.WriteString(p.text)
			continue
		}
		val, ok := p.ref.lookup(v)
		if !ok {
			return "", fmt.Errorf("placeholder {%s} has no value", p.text)
		}
		if special == "" {
			writeValue(&b, val)
			continue
		}
		var vb strings.Builder
		writeValue(&vb, val)
		for _, c := range []byte(vb.String()) {
			if strings.IndexByte(special, c) >= 0 {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String(), nil
}

// MustRenderLoose renders for human readers: a placeholder with no value
// renders as "?" instead of failing.
func (t *Template) MustRenderLoose(v *Vars) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.ref == nil {
			b.WriteString(p.text)
			continue
		}
		val, ok := p.ref.lookup(v)
		if !ok {
			b.WriteByte('?')
			continue
		}
		writeValue(&b, val)
	}
	return b.String()
}

func writeValue(b *strings.Builder, val any) {
	switch val := val.(type) {
	case string:
		b.WriteString(val)
	case json.Number:
		b.WriteString(string(val))
	default:
		b.Write(jsontext.Canonical(val))
	}
}

// lookup finds the placeholder's value in v.
func (r *placeholderRef) lookup(v *Vars) (any, bool) {
	if v == nil {
		return nil, false
	}
	switch r.root {
	case rootArgs:
		return walk(v.Args, r.path)
	case rootRunID:
		return v.RunID, v.RunID != ""
	case rootCallID:
		return v.CallID, v.CallID != ""
	case rootTool:
		return v.Tool, v.Tool != ""
	}
	p := v.Principal
	if p == nil {
		return nil, false
	}
	switch r.root {
	case rootPrincipalID:
		return p.ID, p.ID != ""
	case rootPrincipalLimit:
		n, ok := p.Limits[r.path[0]]
		return n, ok
	case rootPrincipalAttr:
		return walk(p.Attrs, r.path)
	}
	return nil, false
}

// walk follows path through nested objects (and arrays, by index).
func walk(root map[string]any, path []string) (any, bool) {
	var cur any = root
	for _, seg := range path {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
