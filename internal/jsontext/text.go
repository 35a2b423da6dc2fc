package jsontext

import "unicode/utf8"

// Text returns the text of a string ScanString read (its body and flags)
// when it is certainly what encoding/json would unquote it to. It declines
// (false) a body with invalid UTF-8, which encoding/json replaces with
// U+FFFD, and a \u escape of a surrogate half, which it pairs or replaces:
// the caller then asks encoding/json.
func Text(body []byte, flags StringFlags) (string, bool) {
	if flags&NonASCII != 0 && !utf8.Valid(body) {
		return "", false
	}
	if flags&Escaped == 0 {
		return string(body), true
	}
	return unescape(body)
}

// unescape decodes the escapes of a string's body.
func unescape(body []byte) (string, bool) {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(body[i+1:])
			if !ok || r >= 0xD800 && r <= 0xDFFF {
				return "", false // a surrogate: encoding/json's rules
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	r := rune(0)
	for _, h := range b[:4] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
