package jsontext

import "unicode/utf8"

// Valid reports whether data is one JSON value with only whitespace around
// it, answering as json.Valid does (nesting up to MaxNesting included,
// invalid UTF-8 inside strings accepted) without its byte-by-byte state
// machine.
func Valid(data []byte) bool {
	s := Scanner{Data: data, MaxDepth: MaxNesting}
	s.Space()
	return s.SkipValue(1) && s.End()
}

// Compacted reports whether encoding/json would copy raw JSON unchanged,
// as json.Compact does and as json.Marshal does a json.RawMessage: no
// whitespace outside its strings and, when html, nothing its HTML escaping
// would change (<, >, &, and any non-ASCII byte, which might start U+2028
// or U+2029). It does not check that raw is JSON (Valid does); it answers
// false for empty raw.
func Compacted(raw []byte, html bool) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case html && (c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf):
			return false
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		}
	}
	return len(raw) > 0
}
