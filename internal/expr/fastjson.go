package expr

import (
	"encoding/json"
	"unicode/utf8"
)

// maxFastDepth bounds the nesting the fast decoder follows; deeper input
// goes to encoding/json (and its own limit).
const maxFastDepth = 256

// fastDecode decodes the common case of a JSON value without encoding/json:
// it answers ok only for input it decoded exactly as a json.Decoder with
// UseNumber would, and no object repeats a key. Anything else (invalid
// JSON, a repeated key, a string with invalid UTF-8 or a surrogate escape,
// deep nesting, trailing data) answers !ok, and the caller takes the
// careful path, which writes the error message. Arguments are decoded on
// every call: this saves half the validation's allocations.
func fastDecode(raw []byte) (v any, ok bool) {
	d := fastDecoder{s: raw}
	d.space()
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.s)
}

type fastDecoder struct {
	s []byte
	i int
}

func (d *fastDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *fastDecoder) literal(word string) bool {
	if len(d.s)-d.i < len(word) || string(d.s[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

func (d *fastDecoder) object(depth int) (any, bool) {
	d.i++ // {
	obj := map[string]any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return obj, true
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		key := k.(string)
		if _, dup := obj[key]; dup {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		obj[key] = v
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return obj, true
		default:
			return nil, false
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	d.i++ // [
	arr := []any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return arr, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		arr = append(arr, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return arr, true
		default:
			return nil, false
		}
	}
}

// str decodes a string; escapes other than a surrogate \u are decoded, and
// invalid UTF-8 (which encoding/json would replace) is left to it.
func (d *fastDecoder) str() (any, bool) {
	d.i++ // "
	start := d.i
	high, escaped := false, false
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			seg := d.s[start:d.i]
			d.i++
			if high && !utf8.Valid(seg) {
				return nil, false
			}
			if !escaped {
				return string(seg), true
			}
			return unescape(seg)
		case c == '\\':
			escaped = true
			d.i += 2
		case c < 0x20:
			return nil, false
		default:
			if c >= utf8.RuneSelf {
				high = true
			}
			d.i++
		}
	}
	return nil, false
}

// unescape decodes the escapes of a string's body.
func unescape(seg []byte) (any, bool) {
	out := make([]byte, 0, len(seg))
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(seg) {
			return nil, false
		}
		switch seg[i] {
		case '"', '\\', '/':
			out = append(out, seg[i])
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
			if i+4 >= len(seg) {
				return nil, false
			}
			r := rune(0)
			for _, h := range seg[i+1 : i+5] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return nil, false
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return nil, false // surrogates: encoding/json's rules
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return nil, false
		}
	}
	return string(out), true
}

// number scans a number literal by JSON's grammar and keeps its text.
func (d *fastDecoder) number() (any, bool) {
	n := NumberLen(d.s[d.i:])
	if n < 0 {
		return nil, false
	}
	d.i += n
	return json.Number(d.s[d.i-n : d.i]), true
}
