package expr

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/toolgate/toolgate/internal/jsontext"
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

// Hash returns the first 32 hex digits of the SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
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
		return jsontext.AppendString(b, v, canonicalEscape)
	case json.Number:
		if jsontext.ValidNumber(string(v)) {
			return append(b, v...)
		}
		return jsontext.AppendString(b, string(v), canonicalEscape)
	case float64:
		return appendFloat(b, v)
	case float32:
		return appendFloat(b, float64(v))
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
			b = jsontext.AppendString(b, e, canonicalEscape)
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
		b = jsontext.AppendString(b, k, canonicalEscape)
		b = append(b, ':')
		b = appendCanonical(b, m[k])
	}
	return append(b, '}')
}

// appendFloat formats like encoding/json: shortest representation, with an
// exponent only outside [1e-6, 1e21). NaN and infinities are not JSON and
// become null.
func appendFloat(b []byte, f float64) []byte {
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
const canonicalEscape jsontext.Escape = 0

// isDigit reports whether c is an ASCII digit (templates' names).
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
