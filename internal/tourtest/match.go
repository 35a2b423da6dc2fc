package tourtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// more stands for a "..." in a JSON array: the array may go on.
const more = "\x00..."

// MatchText reports whether got matches want as text: "..." in want matches
// any text (across lines too), runs of spaces count as one, and trailing
// spaces and blank lines at either end do not count.
func MatchText(want, got string) error {
	w, g := normalize(want), normalize(got)
	if globPattern(w).MatchString(g) {
		return nil
	}
	return fmt.Errorf("the output does not match.\n--- want (\"...\" matches any text)\n%s\n--- got\n%s", w, g)
}

var spaces = regexp.MustCompile(`[ \t]+`)

func normalize(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = spaces.ReplaceAllString(strings.TrimRight(l, " \t"), " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// globPattern is want as a regular expression over the whole text.
func globPattern(want string) *regexp.Regexp {
	parts := strings.Split(want, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)\A` + strings.Join(parts, `.*?`) + `\z`)
}

// MatchJSON reports whether got holds the JSON values want shows, in order:
// an object may have fields want leaves out, an array has want's elements
// (and may go on where want ends with ...), a string matches want's as
// text ("..." matches any text), numbers are equal as numbers. A bare ...
// in want's object or array stands for what it leaves out.
func MatchJSON(want, got string) error {
	wants, err := decodeAll(elide(want))
	if err != nil {
		return fmt.Errorf("the expected output is not JSON (bare ... allowed): %v", err)
	}
	gots, err := decodeAll(got)
	if err != nil {
		return fmt.Errorf("the output is not JSON: %v\n--- got\n%s", err, got)
	}
	if len(gots) != len(wants) {
		return fmt.Errorf("want %d JSON values, got %d:\n%s", len(wants), len(gots), got)
	}
	for i := range wants {
		if err := matchValue("", wants[i], gots[i]); err != nil {
			return fmt.Errorf("JSON value %d: %v\n--- got\n%s", i+1, err, got)
		}
	}
	return nil
}

func decodeAll(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// elide rewrites the bare ... of a JSON text outside its strings: in an
// object it is dropped (with its comma), in an array it becomes the string
// more.
func elide(s string) string {
	var out bytes.Buffer
	var stack []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			end := stringEnd(s, i)
			out.WriteString(s[i:end])
			i = end - 1
		case c == '{' || c == '[':
			stack = append(stack, c)
			out.WriteByte(c)
		case (c == '}' || c == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
			out.WriteByte(c)
		case strings.HasPrefix(s[i:], "...") && len(stack) > 0 && stack[len(stack)-1] == '[':
			out.WriteString(`"\u0000..."`)
			i += 2
		case strings.HasPrefix(s[i:], "..."):
			i = dropEllipsis(s, i, &out)
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

// stringEnd is the index after the JSON string that starts at s[i].
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// dropEllipsis drops the ... at s[i] of an object and the comma that
// joined it: the one written before it, or else the one after it. It
// returns the index of the last byte consumed.
func dropEllipsis(s string, i int, out *bytes.Buffer) int {
	b := bytes.TrimRight(out.Bytes(), " \t\r\n")
	if len(b) > 0 && b[len(b)-1] == ',' {
		out.Truncate(len(b) - 1)
		return i + 2
	}
	j := i + 3
	for j < len(s) && strings.ContainsRune(" \t\r\n", rune(s[j])) {
		j++
	}
	if j < len(s) && s[j] == ',' {
		return j
	}
	return i + 2
}

func matchValue(path string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", orRoot(path), show(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: no field %q", orRoot(path), k)
			}
			if err := matchValue(join(path, k), w[k], gv); err != nil {
				return err
			}
		}
		return nil
	case []any:
		return matchArray(path, w, got)
	case string:
		g, ok := got.(string)
		if !ok {
			return fmt.Errorf("%s: want a string matching %q, got %s", orRoot(path), w, show(got))
		}
		if !globPattern(w).MatchString(g) {
			return fmt.Errorf("%s: want %q (\"...\" matches any text), got %q", orRoot(path), w, g)
		}
		return nil
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return fmt.Errorf("%s: want %s, got %s", orRoot(path), w, show(got))
		}
		return nil
	}
	if want != got {
		return fmt.Errorf("%s: want %s, got %s", orRoot(path), show(want), show(got))
	}
	return nil
}

func matchArray(path string, w []any, got any) error {
	g, ok := got.([]any)
	if !ok {
		return fmt.Errorf("%s: want an array, got %s", orRoot(path), show(got))
	}
	open := len(w) > 0 && w[len(w)-1] == more
	if open {
		w = w[:len(w)-1]
	}
	if len(g) < len(w) || !open && len(g) != len(w) {
		return fmt.Errorf("%s: want %d elements, got %d: %s", orRoot(path), len(w), len(g), show(got))
	}
	for i := range w {
		if err := matchValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
			return err
		}
	}
	return nil
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	return err1 == nil && err2 == nil && x == y
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(the value)"
	}
	return path
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
