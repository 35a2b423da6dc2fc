package jsontext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]any
		wantErr string
	}{
		{"object", `{"a":1,"b":[true,null],"c":{"d":"x"}}`,
			map[string]any{"a": json.Number("1"), "b": []any{true, nil}, "c": map[string]any{"d": "x"}}, ""},
		{"big integer exact", `{"n":9007199254740993}`, map[string]any{"n": json.Number("9007199254740993")}, ""},
		{"empty object", ` {} `, map[string]any{}, ""},
		{"array", `[1]`, nil, "got an array"},
		{"string", `"x"`, nil, "got a string"},
		{"number", `12`, nil, "got a number"},
		{"bool", `true`, nil, "got a boolean"},
		{"null", `null`, nil, "got null"},
		{"empty", ``, nil, "empty input"},
		{"invalid", `{"a":}`, nil, "invalid JSON"},
		{"truncated", `{"a":1`, nil, "unexpected end of input"},
		{"trailing object", `{} {}`, nil, "unexpected data after the value"},
		{"trailing garbage", `{"a":1}x`, nil, "unexpected data after the value"},
		{"duplicate key", `{"amount":5,"amount":900000}`, nil, `key "amount" appears twice`},
		{"duplicate key spelled with an escape", `{"a":1,"\u0061":2}`, nil, `key "a" appears twice`},
		{"duplicate key nested", `{"x":[{"k":1},{"k":2,"y":{"z":1,"z":1}}]}`, nil, `key "z" appears twice`},
		{"same key in sibling objects", `{"x":[{"k":1},{"k":2}],"k":{"k":3}}`,
			map[string]any{"x": []any{map[string]any{"k": json.Number("1")}, map[string]any{"k": json.Number("2")}}, "k": map[string]any{"k": json.Number("3")}}, ""},
		{"colons inside strings", `{"url":"http://x:80/a:b","t":"12:30"}`, map[string]any{"url": "http://x:80/a:b", "t": "12:30"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeObject(json.RawMessage(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeObject(%s) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeObject(%s): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeObject(%s) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// mustValue decodes raw with Decode.
func mustValue(t testing.TB, raw string) any {
	t.Helper()
	v, err := Decode(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Decode(%s): %v", raw, err)
	}
	return v
}

// FuzzDecodeObject checks DecodeObject never accepts what encoding/json
// calls invalid, and that Canonical of what it accepts is a fixed point.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":1.50}}`,
		`{"n":9007199254740993,"s":"<&>\u2028"}`,
		`{"a":1,"a":2}`, `{"a":{"b":1},"c":{"b":2}}`, `{"t":"12:30"}`,
		`[]`, `null`, ``, `{"a":`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj, err := DecodeObject(raw)
		if err != nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		canon := Canonical(obj)
		again, err := DecodeObject(canon)
		if err != nil {
			t.Fatalf("canonical %s does not decode: %v", canon, err)
		}
		if !bytes.Equal(Canonical(again), canon) {
			t.Fatalf("canonical is not a fixed point: %s vs %s", canon, Canonical(again))
		}
	})
}

// FuzzFastDecode holds the fast decoder to encoding/json: whatever it
// accepts, encoding/json (UseNumber) decodes to the same value and finds no
// repeated key in.
func FuzzFastDecode(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":1.50,"e":-0.0e+5}}`,
		`{"s":"tab\t \"q\" \\ \/ \b\f\n\r \u00e9 \u20ac \ud83d\ude00","k":"日本"}`,
		`{"a":1,"a":2}`, `{"a":{"b":1},"c":{"b":2}}`, ` [ 1 , 2 ] `, `"x"`, `01`, `1.`, `-`, `1e`,
		`[]`, `null`, ``, `{"a":`, "{\"a\":\"\xff\"}", `{"a":1} x`, `{"a":"\u12"}`, `"\x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := fastDecode(raw)
		if !ok {
			return
		}
		want, err := decodeStd(raw)
		if err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", raw, got, want)
		}
		if obj, isObj := want.(map[string]any); isObj && bytes.Count(raw, []byte{':'}) > countKeys(obj) {
			if err := checkDuplicateKeys(raw); err != nil {
				t.Fatalf("fast decoder accepted a repeated key in %q: %v", raw, err)
			}
		}
	})
}

// TestFastDecodeDeclines lists input the fast decoder must leave to
// encoding/json (which words the error, or replaces bad UTF-8).
func TestFastDecodeDeclines(t *testing.T) {
	for _, raw := range []string{
		``, ` `, `{"a":1,"a":2}`, `{"x":{"a":1,"a":2}}`, "\"\xff\"", `"\ud83d\ude00"`, `"\q"`,
		`01`, `1.`, `.5`, `-`, `+1`, `1e`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1} {}`,
		"\"a\nb\"", `tru`, `nul`, `"open`, `{"a":1`,
	} {
		if v, ok := fastDecode([]byte(raw)); ok {
			t.Errorf("fastDecode(%q) = %#v, ok; want it declined", raw, v)
		}
	}
	for _, raw := range []string{`{}`, `[]`, `0`, `-0.5e-3`, `"é"`, `{"a":[{"b":null}],"c":false}`} {
		if _, ok := fastDecode([]byte(raw)); !ok {
			t.Errorf("fastDecode(%q) declined; want it decoded", raw)
		}
	}
}

// BenchmarkDecodeCanonical decodes a call's arguments and writes their
// canonical JSON, as validation does on every call.
func BenchmarkDecodeCanonical(b *testing.B) {
	raw := json.RawMessage(`{"order_id":"ORD-4471","amount":425000,"note":"refund <partial> \u00e9","lines":[{"sku":"A-1","qty":2}]}`)
	b.ReportAllocs()
	for b.Loop() {
		obj, err := DecodeObject(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = Canonical(obj)
	}
}
