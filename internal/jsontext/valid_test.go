package jsontext

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validCases are JSON texts, valid and not, that every check is held to
// json.Valid on; testdata/valid holds more, one file a case.
var validCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `tru`, `falsey`, `0`, `-0`, `01`, `1.`, `.5`, `1e`, `1e+`, `-`, `+1`,
	`1.5e-3`, `1E9`, `""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`, `"\u12"`, `"\x"`, `"\q"`, `"\a"`, `"\U00e9"`, `"\u00G0"`, `"\u000G"`, `"\u000"`, `"\u000`, `"open`,
	"\"tab\tin\"", "\"\xff\xfe\"", `[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,2]`, ` [ 1 , 2 ] `, `{}`, `{ }`,
	`{"a":1}`, `{"a" 1}`, `{"a":1,}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":[{"b":null}],"c":false}`, `{"a":1}}`,
	`[1]]`, `{"a":1} {}`, `[1] x`, "\t\n\r 1 \t\n\r", "1\v", "\u00a01", `[[[]]]`, `[[[]]`, `{"a":{"b":{}}}`,
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func cases(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{deep(MaxNesting), deep(MaxNesting + 1), `{"a":` + deep(MaxNesting-1) + `}`, `{"a":` + deep(MaxNesting) + `}`}, validCases...)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, string(b))
	}
	return all
}

// TestValidMatchesEncodingJSON holds Valid to json.Valid.
func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range cases(t) {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid %v", c, got, want)
		}
	}
}

// TestSkipValueDepth checks that MaxDepth counts arrays and objects from
// 1 at the outermost, and that scalars do not count.
func TestSkipValueDepth(t *testing.T) {
	for _, tc := range []struct {
		text     string
		maxDepth int
		ok       bool
	}{
		{`1`, 0, true}, {`[]`, 0, false}, {`[]`, 1, true}, {`[[1]]`, 1, false}, {`[[1]]`, 2, true},
		{`{"a":{"b":[]}}`, 2, false}, {`{"a":{"b":[]}}`, 3, true}, {`"x"`, 0, true},
		{`{}`, 0, false}, {`{"a":{}}`, 1, false}, {`{"a":{}}`, 2, true}, {`[{}]`, 1, false},
	} {
		s := Scanner{Data: []byte(tc.text), MaxDepth: tc.maxDepth}
		if got := s.SkipValue(1) && s.End(); got != tc.ok {
			t.Errorf("SkipValue(%s) with MaxDepth %d = %v, want %v", tc.text, tc.maxDepth, got, tc.ok)
		}
	}
}

// TestMembers walks an object member by member as the fast paths do, and
// checks the names, their flags and the spans of the values.
func TestMembers(t *testing.T) {
	text := []byte(` { "a" : 1 , "b\u00e9":[true, null] ,"é":{"x":"y"}} `)
	s := Scanner{Data: text, MaxDepth: 8}
	s.Space()
	if s.Open('}') {
		t.Fatal("Open: the object is not empty")
	}
	type member struct {
		name  string
		flags StringFlags
		value string
	}
	var got []member
	for {
		name, flags, ok := s.Name()
		if !ok {
			t.Fatalf("Name failed at %d", s.Pos)
		}
		start := s.Pos
		if !s.SkipValue(2) {
			t.Fatalf("SkipValue failed at %d", s.Pos)
		}
		got = append(got, member{string(name), flags, string(text[start:s.Pos])})
		more, ok := s.Continue('}')
		if !ok {
			t.Fatalf("Continue failed at %d", s.Pos)
		}
		if !more {
			break
		}
	}
	want := []member{{"a", 0, "1"}, {`b\u00e9`, Escaped, "[true, null]"}, {"é", NonASCII, `{"x":"y"}`}}
	if len(got) != len(want) {
		t.Fatalf("members %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !s.End() {
		t.Errorf("End: %q left", text[s.Pos:])
	}
}

// FuzzValid holds Valid and SkipValue to json.Valid: Valid answers as it
// does, and the span SkipValue consumes (from a value's start) is valid
// JSON on its own.
func FuzzValid(f *testing.F) {
	for _, c := range cases(f) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", data, got, want)
		}
		s := Scanner{Data: data, MaxDepth: MaxNesting}
		s.Space()
		start := s.Pos
		if s.SkipValue(1) && !json.Valid(data[start:s.Pos]) {
			t.Fatalf("SkipValue took %q from %q, which json.Valid refuses", data[start:s.Pos], data)
		}
	})
}

// TestCompacted checks Compacted against what encoding/json writes for a
// json.RawMessage: where it says unchanged, encoding/json copies the text.
func TestCompacted(t *testing.T) {
	for _, tc := range []struct {
		raw       string
		html, out bool
	}{
		{`{"ok":1}`, true, true}, {`{"a":"x y"}`, true, true}, {`{"a": 1}`, false, false}, {"[1]\n", false, false},
		{`"<b>"`, false, true}, {`"<b>"`, true, false}, {`"é"`, false, true}, {`"é"`, true, false},
		{`"\" "`, false, true}, {`"\\" `, false, false}, {``, false, false},
	} {
		if got := Compacted([]byte(tc.raw), tc.html); got != tc.out {
			t.Errorf("Compacted(%q, %v) = %v, want %v", tc.raw, tc.html, got, tc.out)
		}
	}
	for _, c := range cases(t) {
		checkCompacted(t, []byte(c))
	}
}

func checkCompacted(t testing.TB, raw []byte) {
	t.Helper()
	for _, html := range []bool{true, false} {
		if !Compacted(raw, html) || !Valid(raw) {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(json.RawMessage(raw)); err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, raw) {
			t.Fatalf("Compacted(%q, %v), but encoding/json writes %q", raw, html, got)
		}
	}
}

// FuzzCompacted: where Compacted and Valid say raw JSON is copied as it
// is, encoding/json copies it.
func FuzzCompacted(f *testing.F) {
	for _, c := range cases(f) {
		f.Add([]byte(c))
	}
	f.Add([]byte("\"\u2028\""))
	f.Fuzz(func(t *testing.T, raw []byte) { checkCompacted(t, raw) })
}

func BenchmarkValid(b *testing.B) {
	data := []byte(`{"id":"ORD-4471","items":[{"sku":"A-1","qty":2,"price":12.5},{"sku":"B-7","qty":1,"price":3}],"paid":true,"note":null}`)
	b.Run("jsontext", func(b *testing.B) {
		for b.Loop() {
			Valid(data)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(data)
		}
	})
}
