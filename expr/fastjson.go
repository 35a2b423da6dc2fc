package expr

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/jsontext"
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
	d := fastDecoder{Scanner: jsontext.Scanner{Data: raw}}
	d.Space()
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	return v, d.End()
}

// fastDecoder builds Decode's values on jsontext's scanner; depth counts
// every value (a scalar too) from 0 at the top.
type fastDecoder struct {
	jsontext.Scanner
}

func (d *fastDecoder) value(depth int) (any, bool) {
	if d.Pos >= len(d.Data) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.Data[d.Pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		start := d.Pos
		if !d.SkipNumber() {
			return nil, false
		}
		return json.Number(d.Data[start:d.Pos]), true
	case c == 't':
		return true, d.Literal("true")
	case c == 'f':
		return false, d.Literal("false")
	case c == 'n':
		return nil, d.Literal("null")
	}
	return nil, false
}

func (d *fastDecoder) object(depth int) (any, bool) {
	obj := map[string]any{}
	if d.Open('}') {
		return obj, true
	}
	for {
		name, flags, ok := d.Name()
		if !ok {
			return nil, false
		}
		key, ok := jsontext.Text(name, flags)
		if !ok {
			return nil, false
		}
		if _, dup := obj[key]; dup {
			return nil, false
		}
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		obj[key] = v
		if more, ok := d.Continue('}'); !more {
			return obj, ok
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	arr := []any{}
	if d.Open(']') {
		return arr, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		arr = append(arr, v)
		if more, ok := d.Continue(']'); !more {
			return arr, ok
		}
	}
}

// str decodes a string; escapes other than a surrogate \u are decoded, and
// invalid UTF-8 (which encoding/json would replace) is left to it.
func (d *fastDecoder) str() (any, bool) {
	body, flags, ok := d.ScanString()
	if !ok {
		return nil, false
	}
	return jsontext.Text(body, flags)
}
