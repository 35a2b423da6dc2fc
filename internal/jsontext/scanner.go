package jsontext

import "unicode/utf8"

// MaxNesting is encoding/json's nesting limit: json.Valid refuses text
// whose arrays and objects nest deeper than this.
const MaxNesting = 10000

// Scanner walks JSON text. Each method reads from Pos and moves it past
// what it read; one that answers false leaves Pos wherever it stopped, and
// the caller gives up on the text (the fast paths then take
// encoding/json's, which words the error). The zero MaxDepth accepts no
// array or object.
type Scanner struct {
	Data     []byte
	Pos      int
	MaxDepth int // the deepest nesting SkipValue accepts; an outermost array or object is depth 1
}

// StringFlags says what ScanString saw inside a string.
type StringFlags uint8

const (
	// Escaped marks a string with at least one backslash escape: its text
	// is not its bytes.
	Escaped StringFlags = 1 << iota
	// NonASCII marks a string with a byte from 0x80 up, which may be
	// invalid UTF-8.
	NonASCII
)

// Space skips JSON's whitespace (exactly encoding/json's four bytes).
func (s *Scanner) Space() {
	i := s.Pos
	for i < len(s.Data) && (s.Data[i] == ' ' || s.Data[i] == '\t' || s.Data[i] == '\n' || s.Data[i] == '\r') {
		i++
	}
	s.Pos = i
}

// Next consumes c when it is the next byte.
func (s *Scanner) Next(c byte) bool {
	if s.Pos < len(s.Data) && s.Data[s.Pos] == c {
		s.Pos++
		return true
	}
	return false
}

// End skips whitespace and reports whether the text ends there.
func (s *Scanner) End() bool {
	s.Space()
	return s.Pos == len(s.Data)
}

// Literal consumes word (true, false, null) when it comes next.
func (s *Scanner) Literal(word string) bool {
	if len(s.Data)-s.Pos < len(word) || string(s.Data[s.Pos:s.Pos+len(word)]) != word {
		return false
	}
	s.Pos += len(word)
	return true
}

// Name consumes a member's name and the colon after it, with the
// whitespace around the colon, and returns the name as ScanString does.
func (s *Scanner) Name() (name []byte, flags StringFlags, ok bool) {
	if name, flags, ok = s.ScanString(); !ok {
		return nil, 0, false
	}
	if s.Space(); !s.Next(':') {
		return nil, 0, false
	}
	s.Space()
	return name, flags, true
}

// ScanString consumes a string and returns the bytes between its quotes.
// It checks the escapes and refuses control characters; any other byte is
// accepted, invalid UTF-8 included, as encoding/json's scanner accepts it
// (Text tells whether the bytes are the string's text).
// It is a leaf function (no calls): it runs for every string of a body.
func (s *Scanner) ScanString() (body []byte, flags StringFlags, ok bool) {
	data, start := s.Data, s.Pos+1
	if start > len(data) || data[start-1] != '"' {
		return nil, 0, false
	}
	var high byte // the OR of the plain bytes: its top bit is set when one is non-ASCII
	for i := start; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			s.Pos = i + 1
			if high >= utf8.RuneSelf {
				flags |= NonASCII
			}
			return data[start:i], flags, true
		case c == '\\':
			e := byte(0)
			if i+1 < len(data) {
				e = data[i+1]
			}
			switch {
			case e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't':
				i++
			case e == 'u' && i+5 < len(data) && isHex(data[i+2]) && isHex(data[i+3]) && isHex(data[i+4]) && isHex(data[i+5]):
				i += 5
			default:
				s.Pos = i
				return nil, 0, false
			}
			flags |= Escaped
		case c < 0x20:
			s.Pos = i
			return nil, 0, false
		default:
			high |= c
		}
	}
	s.Pos = len(data)
	return nil, 0, false
}

// SkipString consumes a string, as ScanString checks it.
func (s *Scanner) SkipString() bool {
	_, _, ok := s.ScanString()
	return ok
}

// SkipNumber consumes a number by JSON's grammar (NumberLen). Whatever
// follows it is the caller's to judge ("01" stops after the 0, and the 1
// is then refused where a comma or bracket must be).
func (s *Scanner) SkipNumber() bool {
	n := NumberLen(s.Data[s.Pos:])
	if n < 0 {
		return false
	}
	s.Pos += n
	return true
}

// Open consumes the '{' or '[' at Pos and the whitespace after it, and
// reports whether the close comes next (consumed too): the container is
// empty.
func (s *Scanner) Open(close byte) (empty bool) {
	s.Pos++
	s.Space()
	return s.Next(close)
}

// Continue consumes what follows a member or an element: whitespace, then
// either a comma and the whitespace after it (more is true: another
// follows) or close. ok is false for anything else.
func (s *Scanner) Continue(close byte) (more, ok bool) {
	s.Space()
	if s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ',':
			s.Pos++
			s.Space()
			return true, true
		case close:
			s.Pos++
			return false, true
		}
	}
	return false, false
}

// SkipValue consumes one JSON value that starts at Pos, checking its
// syntax as encoding/json's scanner does; depth is the depth an array or
// object starting here would have, refused beyond MaxDepth.
func (s *Scanner) SkipValue(depth int) bool {
	if s.Pos >= len(s.Data) {
		return false
	}
	switch c := s.Data[s.Pos]; {
	case c == '{':
		return s.skipObject(depth)
	case c == '[':
		return s.skipArray(depth)
	case c == '"':
		_, _, ok := s.ScanString()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return s.SkipNumber()
	case c == 't':
		return s.Literal("true")
	case c == 'f':
		return s.Literal("false")
	case c == 'n':
		return s.Literal("null")
	}
	return false
}

func (s *Scanner) skipObject(depth int) bool {
	if depth > s.MaxDepth {
		return false
	}
	if s.Open('}') {
		return true
	}
	for {
		if _, _, ok := s.Name(); !ok || !s.SkipValue(depth+1) {
			return false
		}
		if more, ok := s.Continue('}'); !more {
			return ok
		}
	}
}

func (s *Scanner) skipArray(depth int) bool {
	if depth > s.MaxDepth {
		return false
	}
	if s.Open(']') {
		return true
	}
	for {
		if !s.SkipValue(depth + 1) {
			return false
		}
		if more, ok := s.Continue(']'); !more {
			return ok
		}
	}
}
