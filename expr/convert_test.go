package expr

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/toolgate/toolgate/internal/jsontext"
	tgtypes "github.com/toolgate/toolgate/types"
)

func TestNumberValue(t *testing.T) {
	tests := []struct {
		in   json.Number
		want ref.Val
	}{
		{"0", types.Int(0)},
		{"425000", types.Int(425000)},
		{"-9223372036854775808", types.Int(math.MinInt64)},
		{"9007199254740993", types.Int(9007199254740993)},
		{"9223372036854775808", types.Uint(9223372036854775808)},
		{"18446744073709551615", types.Uint(math.MaxUint64)},
		{"18446744073709551616", types.Double(18446744073709551616)},
		{"1.5", types.Double(1.5)},
		{"1.0", types.Double(1)},
		{"1e3", types.Double(1000)},
		{"1e400", types.Double(math.Inf(1))},
	}
	for _, tt := range tests {
		t.Run(string(tt.in), func(t *testing.T) {
			got := numberValue(tt.in)
			if got.Type() != tt.want.Type() || got.Equal(tt.want) != types.True {
				t.Errorf("numberValue(%s) = %v (%s), want %v (%s)", tt.in, got, got.Type(), tt.want, tt.want.Type())
			}
		})
	}
	if got := numberValue("12abc"); !types.IsError(got) {
		t.Errorf("numberValue(12abc) = %v, want an error", got)
	}
}

// TestCELTypes checks what each Go value looks like inside CEL.
func TestCELTypes(t *testing.T) {
	env := testEnv(t)
	vars := &Vars{
		Args: mustObject(t, `{"i":1,"u":18446744073709551615,"d":1.5,"s":"x","b":true,"n":null,"l":[1],"o":{"k":1}}`),
		Principal: &tgtypes.Principal{
			ID: "p", Permissions: []string{"a"},
			Limits: map[string]json.Number{"max": "10", "ratio": "0.5"},
			Attrs:  map[string]any{"tier": "gold", "n": json.Number("3")},
		},
		Result: mustValue(t, `[{"x":2}]`),
	}
	tests := []struct {
		src, want string
	}{
		{"type(args.i)", "int"},
		{"type(args.u)", "uint"},
		{"type(args.d)", "double"},
		{"type(args.s)", "string"},
		{"type(args.b)", "bool"},
		{"type(args.n)", "null_type"},
		{"type(args.l)", "list"},
		{"type(args.o)", "map"},
		{"type(args.o.k)", "int"},
		{"type(args.l[0])", "int"},
		{"type(principal)", "map"},
		{"type(principal.id)", "string"},
		{"type(principal.permissions)", "list"},
		{"type(principal.limits.max)", "int"},
		{"type(principal.limits.ratio)", "double"},
		{"type(principal.attrs.n)", "int"},
		{"type(result)", "list"},
		{"type(result[0].x)", "int"},
		{"type(state)", "map"},
		{"type(run_id)", "string"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := env.Compile(tt.src + " == " + tt.want)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			ok, err := p.EvalBool(vars)
			if err != nil || !ok {
				t.Errorf("%s is not %s (err %v)", tt.src, tt.want, err)
			}
		})
	}
}

func TestToJSON(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		src  string
		want any
	}{
		{"null", nil},
		{"true", true},
		{"-5", json.Number("-5")},
		{"5u", json.Number("5")},
		{"2.0", json.Number("2")},
		{"0.1 + 0.2", json.Number("0.30000000000000004")},
		{"1e21", json.Number("1e+21")},
		{"'s'", "s"},
		{"b'hi'", "aGk="},
		{"duration('1.5s')", "1.5s"},
		{"[1, 'a', [null]]", []any{json.Number("1"), "a", []any{nil}}},
		{"{1: 'a', true: 'b'}", map[string]any{"1": "a", "true": "b"}},
		{"optional.of(3)", json.Number("3")},
		{"optional.none()", nil},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := env.Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, err := p.Eval(nil)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Eval(%s) = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

// TestBigIntegerRoundTrip follows 9007199254740993 (2^53+1, which float64
// cannot hold) through decode, CEL, template and canonical encoding.
func TestBigIntegerRoundTrip(t *testing.T) {
	const big = "9007199254740993"
	args := mustObject(t, `{"n":`+big+`}`)
	if got := string(jsontext.Canonical(args)); got != `{"n":`+big+`}` {
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
