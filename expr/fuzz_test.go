package expr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

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
