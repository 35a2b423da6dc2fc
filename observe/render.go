package observe

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/toolgate/toolgate/types"
)

// Render writes data as compact JSON in at most max bytes. When it does not
// fit, the longest list (the data itself or one of its top-level fields) is
// shortened to the items that fit; failing that the text is cut. The second
// value says what was left out, or is nil.
func Render(data json.RawMessage, max int) (string, *types.Omitted) {
	if max < 64 {
		max = 64
	}
	text := data // already compact: used as it is, not copied
	if !compact(data) || !json.Valid(data) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			buf.Reset()
			buf.Write(data)
		}
		text = buf.Bytes()
	}
	if len(text) <= max {
		return string(text), nil
	}
	if s, om, ok := shortenList(text, max); ok {
		return s, om
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return string(text[:cut]) + "…", &types.Omitted{ShownBytes: cut, TotalBytes: len(text)}
}

// compact reports whether data has no whitespace outside its strings, so
// that json.Compact would leave it as it is (an invalid value too: Render
// then shows it raw). It allocates nothing: it runs on every success.
func compact(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		}
	}
	return true
}

// shortenList shortens the data, when it is a list, or else its longest
// top-level list field, to the items that fit in max bytes. It works on the
// compact encoding by offsets and decodes nothing, so a huge answer of
// small items costs no memory beyond the text shown (decoding each item
// used to cost many times the answer's size).
func shortenList(compact []byte, max int) (string, *types.Omitted, bool) {
	switch {
	case len(compact) > 1 && compact[0] == '[':
		end, shown, total, ok := fitItems(compact, max-1)
		if !ok {
			return "", nil, false
		}
		return closeList(compact[:end], shown), &types.Omitted{Shown: shown, Total: total}, true
	case len(compact) > 1 && compact[0] == '{':
	default:
		return "", nil, false
	}
	// The longest list-valued member, by the size of its value; the first
	// in key order among equals.
	field, valueAt, valueEnd := "", 0, 0
	for i := 1; i < len(compact) && compact[i] == '"'; {
		keyEnd := skipValue(compact, i)
		if keyEnd < 0 || keyEnd >= len(compact) || compact[keyEnd] != ':' {
			return "", nil, false
		}
		vs := keyEnd + 1
		ve := skipValue(compact, vs)
		if ve < 0 {
			return "", nil, false
		}
		if compact[vs] == '[' {
			var key string
			if json.Unmarshal(compact[i:keyEnd], &key) != nil {
				return "", nil, false
			}
			if size, longest := ve-vs, valueEnd-valueAt; size > longest || size == longest && field != "" && key < field {
				field, valueAt, valueEnd = key, vs, ve
			}
		}
		if ve >= len(compact) || compact[ve] != ',' {
			break
		}
		i = ve + 1
	}
	if field == "" {
		return "", nil, false
	}
	rest := len(compact) - (valueEnd - valueAt) // the object without the list
	end, shown, total, ok := fitItems(compact[valueAt:valueEnd], max-rest-1)
	if !ok {
		return "", nil, false
	}
	list := closeList(compact[valueAt:valueAt+end], shown)
	out := make([]byte, 0, rest+len(list))
	out = append(append(append(out, compact[:valueAt]...), list...), compact[valueEnd:]...)
	return string(out), &types.Omitted{Shown: shown, Total: total, Field: field}, true
}

// fitItems walks the items of the compact list at the start of b and
// returns the offset just past the last item that fits in room bytes
// (counting the opening bracket), how many items that is, and how many the
// list has. ok is false when b is not a well-formed list or not even the
// empty list fits.
func fitItems(b []byte, room int) (end, shown, total int, ok bool) {
	if room < 1 || len(b) < 2 || b[0] != '[' {
		return 0, 0, 0, false
	}
	end = 1
	if b[1] == ']' {
		return end, 0, 0, true
	}
	for i := 1; i < len(b); {
		e := skipValue(b, i)
		if e < 0 || e >= len(b) {
			return 0, 0, 0, false
		}
		total++
		if e <= room && shown == total-1 {
			end, shown = e, total
		}
		if b[e] != ',' {
			return end, shown, total, b[e] == ']'
		}
		i = e + 1
	}
	return 0, 0, 0, false
}

// closeList closes the prefix of a compact list cut after its shown items.
func closeList(prefix []byte, shown int) string {
	if shown == 0 {
		return "[]"
	}
	return string(prefix) + "]"
}

// skipValue returns the offset just past the JSON value that starts at
// b[i] in compact JSON, or -1 when it is malformed.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth, in := 0, false
		for j := i; j < len(b); j++ {
			c := b[j]
			switch {
			case in && c == '\\':
				j++
			case c == '"':
				in = !in
			case in:
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != ']' && b[j] != '}' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
