package jsontext

import (
	"bytes"
	"encoding/json"
	"math"
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

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   string // JSON, decoded with Decode first
		want string
	}{
		{"keys sorted", `{"b":1,"a":2,"c":3}`, `{"a":2,"b":1,"c":3}`},
		{"nested sorted", `{"z":{"y":1,"x":[{"b":1,"a":2}]},"a":null}`, `{"a":null,"z":{"x":[{"a":2,"b":1}],"y":1}}`},
		{"whitespace removed", "{ \"a\" :\n [ 1 , 2 ] }", `{"a":[1,2]}`},
		{"decimal literal kept", `{"price":1.50}`, `{"price":1.50}`},
		{"big integer kept", `{"n":9007199254740993}`, `{"n":9007199254740993}`},
		{"exponent kept", `[1e3,-0,2E-5]`, `[1e3,-0,2E-5]`},
		{"no HTML escaping", `{"s":"<a href='x'>&</a>"}`, `{"s":"<a href='x'>&</a>"}`},
		{"escapes", `{"s":"q\"b\\n\n\t\u0001"}`, `{"s":"q\"b\\n\n\t\u0001"}`},
		{"unicode raw", `{"s":"\u20b9 \u00e9"}`, `{"s":"₹ é"}`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"scalars", `"x"`, `"x"`},
		{"key order bytewise", `{"b":1,"B":2,"_":3,"a":4}`, `{"B":2,"_":3,"a":4,"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustValue(t, tt.in)
			if got := string(Canonical(v)); got != tt.want {
				t.Errorf("Canonical(%s) = %s, want %s", tt.in, got, tt.want)
			}
			// Canonical of canonical is itself.
			if again := string(Canonical(mustValue(t, tt.want))); again != tt.want {
				t.Errorf("Canonical is not idempotent: %s -> %s", tt.want, again)
			}
		})
	}
}

func TestCanonicalGoValues(t *testing.T) {
	type shape struct {
		B int    `json:"b"`
		A string `json:"a"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"float", 1.5, `1.5`},
		{"float big", 1e21, `1e+21`},
		{"nan", math.NaN(), `null`},
		{"ints", []any{1, int64(-2), uint64(18446744073709551615)}, `[1,-2,18446744073709551615]`},
		{"strings", []string{"b", "a"}, `["b","a"]`},
		{"limits", map[string]json.Number{"b": "2", "a": "1.0"}, `{"a":1.0,"b":2}`},
		{"invalid number is a string", json.Number("12abc"), `"12abc"`},
		{"raw message", json.RawMessage(`{"b": 1, "a": 2}`), `{"a":2,"b":1}`},
		{"struct via encoding/json", shape{B: 1, A: "x"}, `{"a":"x","b":1}`},
		{"invalid utf8", "a\xffb", `"a` + "\ufffd" + `b"`},
		{"unencodable", make(chan int), `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Canonical(tt.in)); got != tt.want {
				t.Errorf("Canonical(%v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestCanonicalIntegerWidths covers every Go integer type Canonical writes
// itself, at its extremes.
func TestCanonicalIntegerWidths(t *testing.T) {
	in := []any{int(-1), int8(math.MinInt8), int16(math.MinInt16), int32(math.MinInt32), int64(math.MinInt64),
		uint(1), uint8(math.MaxUint8), uint16(math.MaxUint16), uint32(math.MaxUint32), uint64(math.MaxUint64)}
	want := `[-1,-128,-32768,-2147483648,-9223372036854775808,1,255,65535,4294967295,18446744073709551615]`
	if got := string(Canonical(in)); got != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
}

func TestHash(t *testing.T) {
	a := Hash(Canonical(mustValue(t, `{"a":1,"b":2}`)))
	b := Hash(Canonical(mustValue(t, `{"b":2, "a":1}`)))
	c := Hash(Canonical(mustValue(t, `{"a":1,"b":3}`)))
	if len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("Hash = %q, want 32 lowercase hex digits", a)
	}
	if a != b {
		t.Errorf("same object, different hashes: %s %s", a, b)
	}
	if a == c {
		t.Errorf("different objects, same hash %s", a)
	}
	// sha256("") begins e3b0c442...
	if got := Hash(nil); got != "e3b0c44298fc1c149afbf4c8996fb924" {
		t.Errorf("Hash(nil) = %s", got)
	}
}
