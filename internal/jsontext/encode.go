package jsontext

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

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

// Canonical encodes v as canonical JSON: object keys sorted bytewise, no
// insignificant whitespace, no HTML escaping, and json.Number emitted as its
// literal unchanged. It accepts the values Decode produces (nil, bool,
// string, json.Number, []any, map[string]any) and, for convenience, Go
// numbers, []string, map[string]string, map[string]json.Number and
// json.RawMessage; anything else goes through encoding/json first. A value
// that cannot be encoded at all (a channel, NaN) becomes null.
func Canonical(v any) []byte {
	return appendCanonical(make([]byte, 0, 64), v)
}

func appendCanonical(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendString(b, v, canonicalEscape)
	case json.Number:
		if ValidNumber(string(v)) {
			return append(b, v...)
		}
		return AppendString(b, string(v), canonicalEscape)
	case float64:
		return AppendFloat(b, v)
	case float32:
		return AppendFloat(b, float64(v))
	case int, int8, int16, int32, int64:
		return strconv.AppendInt(b, reflect.ValueOf(v).Int(), 10)
	case uint, uint8, uint16, uint32, uint64:
		return strconv.AppendUint(b, reflect.ValueOf(v).Uint(), 10)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, e, canonicalEscape)
		}
		return append(b, ']')
	case map[string]any:
		return appendMap(b, v)
	case map[string]string:
		return appendMap(b, v)
	case map[string]json.Number:
		return appendMap(b, v)
	case json.RawMessage:
		d, err := Decode(v)
		if err != nil {
			return append(b, "null"...)
		}
		return appendCanonical(b, d)
	}
	// Structs, typed slices and maps: let encoding/json apply its tags,
	// then canonicalise the result.
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	d, err := Decode(raw)
	if err != nil {
		return append(b, "null"...)
	}
	return appendCanonical(b, d)
}

func appendMap[V any](b []byte, m map[string]V) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k, canonicalEscape)
		b = append(b, ':')
		b = appendCanonical(b, m[k])
	}
	return append(b, '}')
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// representation, with an exponent only outside [1e-6, 1e21). NaN and
// infinities are not JSON and become null.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}

// canonicalEscape is canonical JSON's string escaping: only quotes,
// backslashes and control characters; <, >, &, U+2028, U+2029 and other
// non-ASCII text written as they are; invalid UTF-8 as U+FFFD itself.
const canonicalEscape Escape = 0

// Hash returns the first 32 hex digits of the SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
