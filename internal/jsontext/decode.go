package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode decodes any single JSON value, keeping numbers as json.Number.
// Objects become map[string]any and arrays []any. Trailing data after the
// value is an error.
func Decode(raw json.RawMessage) (any, error) {
	if v, ok := fastDecode(raw); ok {
		return v, nil
	}
	return decodeStd(raw)
}

// decodeStd is Decode by encoding/json, which also words the errors.
func decodeStd(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("no JSON value (empty input)")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", jsonErrorText(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: unexpected data after the value")
	}
	return v, nil
}

// DecodeObject decodes raw, which must be exactly one JSON object, keeping
// numbers as json.Number. The error says what raw was instead ("got an
// array", "got null", "got a string", "invalid JSON: ...").
//
// A key repeated within one object, at any depth, is an error: readers
// disagree on which copy wins, so {"amount": 5, "amount": 900000} could be
// judged as one value and executed as the other.
func DecodeObject(raw json.RawMessage) (map[string]any, error) {
	if v, ok := fastDecode(raw); ok {
		// The fast decoder refuses repeated keys itself.
		if obj, ok := v.(map[string]any); ok {
			return obj, nil
		}
		return nil, fmt.Errorf("want a JSON object, got %s", describeKind(v))
	}
	v, err := decodeStd(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", describeKind(v))
	}
	if bytes.Count(raw, []byte{':'}) > countKeys(obj) {
		// More colons than keys: either a colon inside a string or a
		// repeated key. Only then pay for the token-by-token check.
		if err := checkDuplicateKeys(raw); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// countKeys counts the object keys in a decoded value.
func countKeys(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := len(v)
		for _, e := range v {
			n += countKeys(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += countKeys(e)
		}
		return n
	}
	return 0
}

// checkDuplicateKeys walks raw (already known to be valid JSON) token by
// token and reports the first key repeated within one object.
func checkDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		keys    map[string]bool
		isObj   bool
		wantKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("invalid JSON: %s", jsonErrorText(err))
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].isObj && stack[top].wantKey {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				key, _ := tok.(string)
				if stack[top].keys[key] {
					return fmt.Errorf("invalid JSON: key %q appears twice in one object", key)
				}
				stack[top].keys[key] = true
				stack[top].wantKey = false
				continue
			}
		}
		if top >= 0 && stack[top].isObj {
			stack[top].wantKey = true // after this value, a key (or '}') comes
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{keys: map[string]bool{}, isObj: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// jsonErrorText shortens encoding/json's messages ("unexpected EOF",
// "invalid character 'x' looking for beginning of value").
func jsonErrorText(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// describeKind names the JSON kind of a decoded value with its article:
// "an array", "a string", "null".
func describeKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

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
	d := fastDecoder{Scanner: Scanner{Data: raw}}
	d.Space()
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	return v, d.End()
}

// fastDecoder builds Decode's values on the Scanner; depth counts
// every value (a scalar too) from 0 at the top.
type fastDecoder struct {
	Scanner
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
		key, ok := Text(name, flags)
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
	return Text(body, flags)
}
