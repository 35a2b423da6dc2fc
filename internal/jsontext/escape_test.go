package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// marshalString is encoding/json's encoding of s: json.Marshal's with
// html, an Encoder's with SetEscapeHTML(false) without.
func marshalString(t testing.TB, s string, html bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// escapeCases are the strings every escaping is checked on.
var escapeCases = []string{
	"", "plain", `quote " backslash \ slash /`, "\b\f\n\r\t", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "é 日本 😀", "\u2028 and \u2029", "\u2027\u202a",
	"bad \xff byte", "\xc3", "cut \xe2\x80", "\xed\xa0\x80 surrogate bytes", "\xf4\x90\x80\x80 beyond",
	"\ufffd real replacement", strings.Repeat("a<", 40),
}

// TestAppendStringMatchesEncodingJSON holds EncodingJSON(html) to
// encoding/json, for both HTML settings.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, html := range []bool{true, false} {
		for _, s := range escapeCases {
			got := string(AppendString(nil, s, EncodingJSON(html)))
			if want := marshalString(t, s, html); got != want {
				t.Errorf("html %v: AppendString(%q) = %s, encoding/json %s", html, s, got, want)
			}
		}
	}
}

// TestAppendStringCanonical pins canonical JSON's escaping (the zero
// Escape), which differs from encoding/json's on purpose: hashes of
// canonical text are stored, so it must never change.
func TestAppendStringCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\f\n\r\t\x00\x1f", `"\b\f\n\r\t\u0000\u001f"`},
		{"<&>", `"<&>"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é\xffx", "\"é\ufffdx\""},
		{"\x7f", "\"\x7f\""},
	} {
		if got := string(AppendString(nil, tc.in, 0)); got != tc.want {
			t.Errorf("AppendString(%q, 0) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestAppendStringAppends checks that the string goes after what b holds.
func TestAppendStringAppends(t *testing.T) {
	if got := string(AppendString([]byte(`{"k":`), "v", HTML)); got != `{"k":"v"` {
		t.Errorf("got %s", got)
	}
}

// FuzzAppendString holds AppendString to encoding/json for both HTML
// settings, and checks that canonical escaping decodes to the same text
// encoding/json decodes its own output to.
func FuzzAppendString(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			got := string(AppendString(nil, s, EncodingJSON(html)))
			if want := marshalString(t, s, html); got != want {
				t.Fatalf("html %v: AppendString(%q) = %s, encoding/json %s", html, s, got, want)
			}
		}
		canon := AppendString(nil, s, 0)
		var got, want string
		if err := json.Unmarshal(canon, &got); err != nil {
			t.Fatalf("canonical %s of %q is not JSON: %v", canon, s, err)
		}
		if err := json.Unmarshal([]byte(marshalString(t, s, false)), &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("canonical %s of %q decodes to %q, encoding/json's to %q", canon, s, got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct {
		name string
		esc  Escape
	}{{"canonical", 0}, {"html", EncodingJSON(true)}, {"nohtml", EncodingJSON(false)}} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			for b.Loop() {
				buf = AppendString(buf[:0], "get_order succeeded (1 attempt, 3 ms). Result: {\"id\":\"ORD-4471\"} é", tc.esc)
			}
		})
	}
}
