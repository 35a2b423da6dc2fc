package feedback

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jsontext"
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
	if !compact(data) || !jsontext.Valid(data) {
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
func compact(data []byte) bool { return jsontext.Compacted(data, false) }

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
	sc := jsontext.Scanner{Data: compact, Pos: 1, MaxDepth: jsontext.MaxNesting}
	for sc.Pos < len(compact) && compact[sc.Pos] == '"' {
		keyAt := sc.Pos
		name, flags, ok := sc.Name()
		if !ok {
			return "", nil, false
		}
		vs := sc.Pos
		if !sc.SkipValue(2) {
			return "", nil, false
		}
		ve := sc.Pos
		if compact[vs] == '[' {
			key, ok := jsontext.Text(name, flags)
			if !ok && json.Unmarshal(compact[keyAt:keyAt+len(name)+2], &key) != nil {
				return "", nil, false
			}
			if size, longest := ve-vs, valueEnd-valueAt; size > longest || size == longest && field != "" && key < field {
				field, valueAt, valueEnd = key, vs, ve
			}
		}
		if more, _ := sc.Continue('}'); !more {
			break
		}
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
	sc := jsontext.Scanner{Data: b, Pos: 1, MaxDepth: jsontext.MaxNesting}
	for {
		if !sc.SkipValue(2) {
			return 0, 0, 0, false
		}
		total++
		if sc.Pos <= room && shown == total-1 {
			end, shown = sc.Pos, total
		}
		if more, ok := sc.Continue(']'); !more {
			return end, shown, total, ok
		}
	}
}

// closeList closes the prefix of a compact list cut after its shown items.
func closeList(prefix []byte, shown int) string {
	if shown == 0 {
		return "[]"
	}
	return string(prefix) + "]"
}
