package server

import (
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// The fast path's limits: beyond them a body, however valid, takes the
// encoding/json path. fastMaxDepth keeps the scanner's recursion short and
// well inside encoding/json's own nesting limit (10000), so a depth the
// fast path accepts is one encoding/json accepts; fastMaxMembers bounds
// the quadratic search for a repeated name.
const (
	fastMaxDepth   = 512
	fastMaxMembers = 32
)

// fastMembers is members for the ordinary body, without encoding/json,
// whose Decoder.Token allocates for every token. It answers ok only when
// members would return the same members, byte for byte, and no error:
// body is one JSON object (JSON whitespace around it), no deeper than
// maxDepth, whose member names are unique and free of backslashes,
// control characters and invalid UTF-8 (so a name's bytes are exactly
// what encoding/json would unquote them to), with at most fastMaxMembers
// members. Anything else answers !ok and members takes the careful path,
// which writes every error message.
//
// A value is checked against JSON's grammar and kept as the span of body
// it covers, without the whitespace around it, as Decoder.Decode into a
// json.RawMessage keeps it (but not copied: the span is capped so that
// an append to it cannot write into the rest of body). Like encoding/json,
// it accepts invalid UTF-8 inside a value's strings (kept as it is) and
// does not look for repeated names in nested objects.
func fastMembers(body []byte, maxDepth int) ([]member, bool) {
	s := jsontext.Scanner{Data: body, MaxDepth: min(maxDepth, fastMaxDepth)}
	s.Space()
	if s.MaxDepth < 1 || s.Pos == len(body) || body[s.Pos] != '{' {
		return nil, false
	}
	var out []member // nil for {}, as members answers
	if s.Open('}') {
		return out, s.End()
	}
	for {
		// A name is taken only when its bytes are its text: no escape (an
		// escaped name decodes to other bytes, and two spellings could name
		// the same member), no invalid UTF-8 (which encoding/json would
		// replace); Name refuses control characters, as encoding/json does.
		name, flags, ok := s.Name()
		if !ok || flags&jsontext.Escaped != 0 || flags&jsontext.NonASCII != 0 && !utf8.Valid(name) || len(out) == fastMaxMembers {
			return nil, false
		}
		for _, m := range out {
			if m.name == string(name) { // no allocation: the compiler compares in place
				return nil, false
			}
		}
		start := s.Pos
		if !s.SkipValue(2) {
			return nil, false
		}
		if out == nil {
			out = make([]member, 0, 4) // a call has up to four members
		}
		out = append(out, member{name: string(name), value: body[start:s.Pos:s.Pos]})
		if more, ok := s.Continue('}'); !more {
			return out, ok && s.End()
		}
	}
}
