package server

import (
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/expr"
)

// The fast path's limits: beyond them a body, however valid, takes the
// encoding/json path. fastMaxDepth keeps skipValue's recursion short and
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
	s := fastScanner{b: body, max: min(maxDepth, fastMaxDepth)}
	s.space()
	if s.max < 1 || !s.next('{') {
		return nil, false
	}
	var out []member // nil for {}, as members answers
	if s.space(); s.next('}') {
		s.space()
		return out, s.i == len(s.b)
	}
	for {
		name, ok := s.name()
		if !ok || len(out) == fastMaxMembers {
			return nil, false
		}
		for _, m := range out {
			if m.name == string(name) { // no allocation: the compiler compares in place
				return nil, false
			}
		}
		if s.space(); !s.next(':') {
			return nil, false
		}
		s.space()
		start := s.i
		if !s.skipValue(2) {
			return nil, false
		}
		if out == nil {
			out = make([]member, 0, 4) // a call has up to four members
		}
		out = append(out, member{name: string(name), value: s.b[start:s.i:s.i]})
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next('}'):
			s.space()
			return out, s.i == len(s.b)
		default:
			return nil, false
		}
	}
}

// fastScanner walks JSON text for fastMembers. Each method answers false
// for anything it does not accept, leaving i wherever it stopped.
type fastScanner struct {
	b   []byte
	i   int
	max int // the deepest nesting accepted; the body's object is depth 1
}

// space skips JSON's whitespace (exactly encoding/json's four bytes).
func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c when it is the next byte.
func (s *fastScanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// name scans a member name and returns the bytes between its quotes. It
// declines any escape (an escaped name decodes to other bytes, and two
// spellings could name the same member), a control character (which
// encoding/json refuses) and invalid UTF-8 (which it would replace).
func (s *fastScanner) name() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start, high := s.i, false
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			name := s.b[start:s.i]
			s.i++
			return name, !high || utf8.Valid(name)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return nil, false
}

// skipValue skips one JSON value that starts at i, checking its syntax
// as encoding/json's scanner does; depth is the depth an object or array
// starting here would have.
func (s *fastScanner) skipValue(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.skipObject(depth)
	case c == '[':
		return s.skipArray(depth)
	case c == '"':
		return s.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return s.skipNumber()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *fastScanner) skipObject(depth int) bool {
	if depth > s.max {
		return false
	}
	s.i++ // {
	if s.space(); s.next('}') {
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() {
			return false
		}
		if s.space(); !s.next(':') {
			return false
		}
		s.space()
		if !s.skipValue(depth + 1) {
			return false
		}
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next('}'):
			return true
		default:
			return false
		}
	}
}

func (s *fastScanner) skipArray(depth int) bool {
	if depth > s.max {
		return false
	}
	s.i++ // [
	if s.space(); s.next(']') {
		return true
	}
	for {
		if !s.skipValue(depth + 1) {
			return false
		}
		s.space()
		switch {
		case s.next(','):
			s.space()
		case s.next(']'):
			return true
		default:
			return false
		}
	}
}

// skipString skips a string, checking its escapes; any other byte from
// 0x20 up is accepted, invalid UTF-8 included, as encoding/json's scanner
// accepts it.
func (s *fastScanner) skipString() bool {
	s.i++ // "
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if s.i >= len(s.b) || !isHex(s.b[s.i]) {
						return false
					}
					s.i++
				}
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber skips a number by JSON's grammar (expr.NumberLen). Whatever
// follows it is the caller's to judge ("01" stops after the 0, and the 1
// is then refused where a comma or bracket must be).
func (s *fastScanner) skipNumber() bool {
	n := expr.NumberLen(s.b[s.i:])
	if n < 0 {
		return false
	}
	s.i += n
	return true
}

func (s *fastScanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}
