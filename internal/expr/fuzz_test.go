package expr

import (
	"bytes"
	"encoding/json"
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
