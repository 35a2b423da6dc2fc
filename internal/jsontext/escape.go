package jsontext

import "unicode/utf8"

// Escape chooses how AppendString escapes beyond what JSON requires
// (quotes, backslashes and control characters, always escaped). The zero
// Escape is canonical JSON's: everything else is written as it is, and
// invalid UTF-8 as the replacement character U+FFFD itself.
type Escape uint8

const (
	// HTML writes <, > and & as \u003c, \u003e and \u0026, as json.Marshal
	// does unless an Encoder is told SetEscapeHTML(false).
	HTML Escape = 1 << iota
	// LineSeparators writes U+2028 and U+2029 as \u2028 and \u2029, as
	// encoding/json always does (JavaScript once refused them raw).
	LineSeparators
	// EscapedReplacement writes each byte of invalid UTF-8 as the escape
	// \ufffd, as encoding/json does, rather than as U+FFFD's own bytes.
	EscapedReplacement
)

// EncodingJSON is the Escape that writes encoding/json's bytes: those of
// json.Marshal when html is true, and of an Encoder with
// SetEscapeHTML(false) when false.
func EncodingJSON(html bool) Escape {
	if html {
		return HTML | LineSeparators | EscapedReplacement
	}
	return LineSeparators | EscapedReplacement
}

const hexDigits = "0123456789abcdef"

// safe[html][c] is true for the ASCII bytes written as they are.
var safe = func() (t [2][utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		t[0][c] = c != '"' && c != '\\'
		t[1][c] = t[0][c] && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s to b as a JSON string, escaped as esc says.
func AppendString(b []byte, s string, esc Escape) []byte {
	plain := &safe[0]
	if esc&HTML != 0 {
		plain = &safe[1]
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscapedASCII(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			if esc&EscapedReplacement != 0 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, "\ufffd"...)
			}
		case (r == '\u2028' || r == '\u2029') && esc&LineSeparators != 0:
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscapedASCII writes the escape of an ASCII byte: the short form
// where JSON has one, else \u00XX.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
