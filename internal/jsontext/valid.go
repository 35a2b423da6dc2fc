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

// DepthExceeded reports where data opens an array or object more than max
// levels deep: the byte offset of that bracket, or -1 when none does. It
// counts brackets outside strings only and checks nothing else, so it
// answers for any text, valid JSON or not, before a decoder that would
// recurse into it is run.
func DepthExceeded(data []byte, max int) int {
	depth := 0
	inString, escaped := false, false
	for i, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}
