package observe

import (
	"bytes"
	"encoding/json"
	"sort"
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
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		buf.Reset()
		buf.Write(data)
	}
	if buf.Len() <= max {
		return buf.String(), nil
	}
	if s, om, ok := shortenList(buf.Bytes(), max); ok {
		return s, om
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(buf.Bytes()[cut]) {
		cut--
	}
	return buf.String()[:cut] + "…", &types.Omitted{ShownBytes: cut, TotalBytes: buf.Len()}
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

func shortenList(compact []byte, max int) (string, *types.Omitted, bool) {
	var list []json.RawMessage
	if json.Unmarshal(compact, &list) == nil {
		return fitList(list, max, func(items []json.RawMessage) []byte {
			b, _ := json.Marshal(items)
			return b
		}, "")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(compact, &obj) != nil {
		return "", nil, false
	}
	field, longest := "", 0
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := obj[k]; len(v) > longest && len(v) > 0 && v[0] == '[' {
			field, longest = k, len(v)
		}
	}
	if field == "" {
		return "", nil, false
	}
	if json.Unmarshal(obj[field], &list) != nil {
		return "", nil, false
	}
	return fitList(list, max, func(items []json.RawMessage) []byte {
		out := make(map[string]json.RawMessage, len(obj))
		for k, v := range obj {
			out[k] = v
		}
		out[field], _ = json.Marshal(items)
		b, _ := json.Marshal(out)
		return b
	}, field)
}

// fitList finds by bisection the longest prefix of list whose encoding fits.
func fitList(list []json.RawMessage, max int, encode func([]json.RawMessage) []byte, field string) (string, *types.Omitted, bool) {
	lo, hi := 0, len(list)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(encode(list[:mid])) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	b := encode(list[:lo])
	if len(b) > max {
		return "", nil, false
	}
	return string(b), &types.Omitted{Shown: lo, Total: len(list), Field: field}, true
}
