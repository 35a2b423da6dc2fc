package expr

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

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

// TestBigIntegerRoundTrip follows 9007199254740993 (2^53+1, which float64
// cannot hold) through decode, CEL, template and canonical encoding.
func TestBigIntegerRoundTrip(t *testing.T) {
	const big = "9007199254740993"
	args := mustObject(t, `{"n":`+big+`}`)
	if got := string(Canonical(args)); got != `{"n":`+big+`}` {
		t.Errorf("Canonical = %s", got)
	}
	env := testEnv(t)
	for _, src := range []string{"args.n", "{'m': args.n}.m", "[args.n][0]", "args.n + 0"} {
		p, err := env.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Eval(&Vars{Args: args})
		if err != nil {
			t.Fatal(err)
		}
		if got != json.Number(big) {
			t.Errorf("Eval(%q) = %#v, want %s", src, got, big)
		}
	}
	p, _ := env.Compile("args.n == 9007199254740992")
	if ok, _ := p.EvalBool(&Vars{Args: args}); ok {
		t.Error("2^53+1 compared equal to 2^53: the integer was rounded")
	}
	tmpl, _ := ParseTemplate("{n}")
	if got, _ := tmpl.Render(&Vars{Args: args}); got != big {
		t.Errorf("Render = %s", got)
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
