package jsontext

// NumberLen returns the length of the JSON number literal at the start of
// s, by JSON's grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, or
// -1 when s does not start with one (or its fraction or exponent has no
// digits). What follows the number is the caller's to judge: "01" is the
// number 0 followed by a 1.
func NumberLen[T string | []byte](s T) int {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return -1
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return -1
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i
}

// ValidNumber reports whether s is exactly one JSON number literal.
func ValidNumber(s string) bool { return NumberLen(s) == len(s) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
