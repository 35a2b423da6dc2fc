package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRawMessageSpan pins down what fastMembers must reproduce: a value
// that Decoder.Decode reads into a json.RawMessage after a member name
// holds the value's own bytes, without the whitespace around it.
func TestRawMessageSpan(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader("{\"a\" : \t\n [ 1 , {\"b\" : 2} ] \r\n , \"c\":  -1.5e3  }"))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for _, want := range []string{`[ 1 , {"b" : 2} ]`, `-1.5e3`} {
		if _, err := dec.Token(); err != nil { // the name
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if string(v) != want {
			t.Errorf("RawMessage %q, want %q", v, want)
		}
	}
}

// fastMembersCases are bodies for the differential test and seeds for
// its fuzz test. fast says whether fastMembers must answer the body
// itself (at DefaultMaxDepth); when it declines, members must answer as
// decodeMembers does, which checkFastMembers checks either way.
var fastMembersCases = []struct {
	body string
	fast bool
}{
	// Ordinary bodies.
	{`{"tool":"get_order","args":{"order_id":"ORD-4471"},"call_id":"c1"}`, true},
	{`{"tool":"issue_refund","args":{"order_id":"ORD-1","amount_paise":150000,"items":["a","b"]},"call_id":"toolu_1","usage":{"input_tokens":812,"output_tokens":64}}`, true},
	{`{"run_id":"r1","principal":{"id":"cust_42","permissions":["refunds:write"],"limits":{"max":500000}},"state":{},"max_steps":20}`, true},
	{`{"decision":"approve","by":"asha","comment":null}`, true},
	{`{}`, true},
	{" \t\r\n{ \t\r\n} \t\r\n", true},
	{" { \"tool\" : \"x\" ,\n\t\"args\" :\r\n{ \"a\" : [ 1 , 2 , [ ] , { } ] } , \"n\" : null } \n", true},
	{`{"a":true,"b":false,"c":null,"d":[true,false,null]}`, true},
	{`{"a":{"b":{"c":[[[]],{},[{"d":[0]}]]}}}`, true},
	// Numbers: every form of the grammar, exact however long.
	{`{"a":0,"b":-0,"c":1,"d":-12.50,"e":1e9,"f":1E+9,"g":-1.5e-9,"h":0.0e0}`, true},
	{`{"n":123456789012345678901234567890123456789e-999999,"m":1e400,"k":-0.000000000000000000000001}`, true},
	// Unicode: names in UTF-8 (not escaped), values with escapes and raw.
	{`{"ключ":"значение","emoji😀":"✓","sep` + "\u2028" + `":"` + "\u2029" + `"}`, true},
	{`{"a":"x\"y\\z\/\b\f\n\r\t\u00e9\uD83D\uDE00 \uDEAD \u0000"}`, true},
	{`{"a":"brackets } ] { [ and \" quotes"}`, true},
	{"{\"a\":\"\xff\xfe invalid UTF-8 in a value is kept as it is\"}", true},
	{"{\"a\":\"\x7f\"}", true},
	// A repeated name inside a value is the value's business.
	{`{"a":{"x":1,"x":2}}`, true},

	// Not an object, or nothing.
	{``, false},
	{" \t\n", false},
	{"\u00a0{}", false},
	{`null`, false},
	{`[]`, false},
	{`"s"`, false},
	{`12`, false},
	{"\xef\xbb\xbf{}", false}, // a byte order mark
	// Repeated names.
	{`{"a":1,"a":2}`, false},
	{`{"a":1,"b":2,"a":3}`, false},
	{`{"tool":"x","tool":"y"}`, false},
	// Names fastMembers leaves to encoding/json: escapes (which may spell
	// a repeat), invalid UTF-8 (replaced), control characters (refused).
	{`{"a\u0062":1}`, false},
	{`{"ab":1,"a\u0062":2}`, false},
	{`{"a\\b":1}`, false},
	{`{"a\"b":1}`, false},
	{`{"\uD800":1}`, false},
	{"{\"\xff\":1}", false},
	{"{\"\xff\":1,\"\xfe\":2}", false},
	{"{\"\xed\xa0\x80\":1}", false}, // a UTF-8 surrogate
	{"{\"a\tb\":1}", false},
	{`{1:2}`, false},
	{`{a:2}`, false},
	{`{'a':2}`, false},
	// Values that are not JSON.
	{"{\"a\":\"x\ny\"}", false},
	{"{\"a\":\"\x00\"}", false},
	{`{"a":"\x"}`, false},
	{`{"a":"\u12G4"}`, false},
	{`{"a":"\u12"}`, false},
	{`{"a":"\`, false},
	{`{"a":01}`, false},
	{`{"a":-01}`, false},
	{`{"a":-}`, false},
	{`{"a":1.}`, false},
	{`{"a":.5}`, false},
	{`{"a":1e}`, false},
	{`{"a":1e+}`, false},
	{`{"a":+1}`, false},
	{`{"a":NaN}`, false},
	{`{"a":Infinity}`, false},
	{`{"a":0x10}`, false},
	{`{"a":1_000}`, false},
	{`{"a":tru}`, false},
	{`{"a":True}`, false},
	{`{"a":nul}`, false},
	{`{"a":nullx}`, false},
	{`{"a":[1,]}`, false},
	{`{"a":[,1]}`, false},
	{`{"a":[1 2]}`, false},
	{`{"a":{"b"}}`, false},
	{`{"a":{"b":}}`, false},
	{`{"a":{"b":1,}}`, false},
	{`{"a":{1:1}}`, false},
	{`{"a":[1:2]}`, false},
	{`{"a":}`, false},
	{`{"a"}`, false},
	{`{"a" 1}`, false},
	{`{"a"::1}`, false},
	// Commas and brackets out of place.
	{`{"a":1,}`, false},
	{`{,"a":1}`, false},
	{`{"a":1 "b":2}`, false},
	{`{"a":1,,"b":2}`, false},
	{`{"a":1]`, false},
	{`{"a":[1}}`, false},
	// Unfinished.
	{`{`, false},
	{`{"a`, false},
	{`{"a"`, false},
	{`{"a":`, false},
	{`{"a":1`, false},
	{`{"a":"x`, false},
	{`{"a":[1,2`, false},
	{`{"a":{"b":1}`, false},
	// Data after the object.
	{`{"a":1} x`, false},
	{`{"a":1}{}`, false},
	{`{"a":1},`, false},
	{`{"a":1}}`, false},
	{"{\"a\":1}\x00", false},
	{"{\"a\":1}\f", false},
	{"{\"a\":1}\u00a0", false},
	{"{\"a\":1}\n\n{\"b\":2}", false},
}

// deepBody is a body nested depth levels deep, its own object included.
func deepBody(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// manyMembers is a body of n members.
func manyMembers(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"m` + strings.Repeat("x", i) + `":` + "1")
	}
	b.WriteString("}")
	return b.String()
}

// checkFastMembers is the differential check: members answers exactly as
// decodeMembers (the encoding/json path) does, error messages included,
// and when fastMembers answers, decodeMembers accepts the body and gives
// the same members, names and value bytes. It reports whether
// fastMembers answered.
func checkFastMembers(t *testing.T, body []byte, maxDepth int) bool {
	t.Helper()
	orig := bytes.Clone(body)
	want, wantErr := decodeMembers(body, maxDepth)
	got, gotErr := members(body, maxDepth)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("members(%q, %d) = %v, %+v; decodeMembers: %v, %+v", body, maxDepth, got, gotErr, want, wantErr)
	}
	fast, ok := fastMembers(body, maxDepth)
	if ok && (wantErr != nil || !reflect.DeepEqual(fast, want)) {
		t.Fatalf("fastMembers(%q, %d) = %v; decodeMembers: %v, %+v", body, maxDepth, fast, want, wantErr)
	}
	for _, m := range fast { // a value's span ends where its capacity does
		if cap(m.value) != len(m.value) {
			t.Fatalf("fastMembers(%q): value %q has room to grow into the body", body, m.value)
		}
	}
	if !bytes.Equal(body, orig) {
		t.Fatalf("the body changed: %q, was %q", body, orig)
	}
	return ok
}

func TestFastMembers(t *testing.T) {
	for _, tt := range fastMembersCases {
		if ok := checkFastMembers(t, []byte(tt.body), DefaultMaxDepth); ok != tt.fast {
			t.Errorf("fastMembers(%q) ok = %v, want %v", tt.body, ok, tt.fast)
		}
	}
	// Nesting: up to maxDepth fast, beyond it the careful path refuses; a
	// limit of 0 or less refuses every object.
	for _, tt := range []struct {
		body     string
		maxDepth int
		fast     bool
	}{
		{deepBody(DefaultMaxDepth), DefaultMaxDepth, true},
		{deepBody(DefaultMaxDepth + 1), DefaultMaxDepth, false},
		{deepBody(fastMaxDepth), fastMaxDepth + 10, true},
		{deepBody(fastMaxDepth + 1), fastMaxDepth + 10, false}, // valid, left to encoding/json
		{`{"a":{"b":{}}}`, 3, true},
		{`{"a":{"b":{}}}`, 2, false},
		{`{"a":[{"b":"[[[[{{{{"}]}`, 3, true},
		{`{"a":1}`, 1, true},
		{`{"a":[]}`, 1, false},
		{`{}`, 0, false},
		{`{}`, -1, false},
		{manyMembers(fastMaxMembers), DefaultMaxDepth, true},
		{manyMembers(fastMaxMembers + 1), DefaultMaxDepth, false}, // valid, left to encoding/json
	} {
		if ok := checkFastMembers(t, []byte(tt.body), tt.maxDepth); ok != tt.fast {
			t.Errorf("fastMembers(%.60q, %d) ok = %v, want %v", tt.body, tt.maxDepth, ok, tt.fast)
		}
	}
}

// FuzzFastMembers runs the differential check on arbitrary bodies, and on
// each also wrapped as a member's value ({"v": body}), so that arbitrary
// bytes reach the value scanner at any depth. maxDepth is 0 to 7, or
// DefaultMaxDepth.
func FuzzFastMembers(f *testing.F) {
	for _, tt := range fastMembersCases {
		f.Add([]byte(tt.body), uint8(255))
		f.Add([]byte(tt.body), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, depth uint8) {
		maxDepth := DefaultMaxDepth
		if depth < 128 {
			maxDepth = int(depth % 8)
		}
		checkFastMembers(t, body, maxDepth)
		checkFastMembers(t, append(append([]byte(`{"v":`), body...), '}'), maxDepth)
	})
}

// BenchmarkDecodeCall decodes the body of a typical read call.
func BenchmarkDecodeCall(b *testing.B) {
	body := []byte(`{"tool":"get_order","args":{"order_id":"ORD-4471"},"call_id":"c1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, e := decodeCall(body, DefaultMaxDepth); e != nil {
			b.Fatal(e.message)
		}
	}
}

// BenchmarkMembers splits the body of a typical read call into members.
func BenchmarkMembers(b *testing.B) {
	body := []byte(`{"tool":"get_order","args":{"order_id":"ORD-4471"},"call_id":"c1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, e := members(body, DefaultMaxDepth); e != nil {
			b.Fatal(e.message)
		}
	}
}
