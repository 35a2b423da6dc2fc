package jsontext

import (
	"encoding/json"
	"testing"
)

// TestText checks what Text decodes and what it leaves to encoding/json.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		quoted, want string
		ok           bool
	}{
		{`"plain"`, "plain", true}, {`""`, "", true}, {`"é"`, "é", true},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", true}, {`"\u00e9\u20AC"`, "é€", true},
		{`"\ud83d\ude00"`, "", false}, {`"\udc00"`, "", false}, {"\"\xff\"", "", false}, {"\"\x80\"", "", false}, {"\"\\n\xc3\"", "", false},
	} {
		s := Scanner{Data: []byte(tc.quoted)}
		body, flags, ok := s.ScanString()
		if !ok {
			t.Fatalf("ScanString(%s) failed", tc.quoted)
		}
		got, ok := Text(body, flags)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Text(%s) = %q, %v; want %q, %v", tc.quoted, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzText: a string ScanString accepts is one json.Valid accepts, and
// the text Text gives for it is encoding/json's.
func FuzzText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9"`, `"\ud83d\ude00"`, "\"\xff\"", `"\q"`, `"\u12"`, `"a\"b"`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{Data: data}
		body, flags, ok := s.ScanString()
		if !ok {
			return
		}
		quoted := data[:s.Pos]
		if !json.Valid(quoted) {
			t.Fatalf("ScanString accepted %q, json.Valid refuses it", quoted)
		}
		got, ok := Text(body, flags)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(quoted, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Text(%q) = %q, encoding/json %q", quoted, got, want)
		}
	})
}
