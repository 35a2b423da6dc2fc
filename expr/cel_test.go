package expr

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

func testEnv(t testing.TB) *Env {
	t.Helper()
	env, err := NewEnv()
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	return env
}

func mustObject(t testing.TB, raw string) map[string]any {
	t.Helper()
	m, err := jsontext.DecodeObject(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("DecodeObject(%s): %v", raw, err)
	}
	return m
}

func mustValue(t testing.TB, raw string) any {
	t.Helper()
	v, err := jsontext.Decode(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Decode(%s): %v", raw, err)
	}
	return v
}

// refundVars are the vars of the contract's issue_refund example.
func refundVars(t testing.TB) *Vars {
	return &Vars{
		Args: mustObject(t, `{"order_id":"ORD-4471","amount_paise":425000}`),
		Principal: &types.Principal{
			ID:          "cust_42",
			Permissions: []string{"refunds:write"},
			Limits:      map[string]json.Number{"max_refund_paise": "500000", "ratio": "0.5"},
			Attrs:       map[string]any{"tier": "gold", "region": map[string]any{"code": "IN"}},
		},
		State:  mustObject(t, `{"refunded_paise":100000,"big":9007199254740993}`),
		Result: mustValue(t, `{"customer_id":"cust_42","refunds":[{"amount_paise":1000},{"amount_paise":425000}]}`),
		RunID:  "r1",
		CallID: "toolu_1",
		Tool:   "issue_refund",
	}
}

func TestEval(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name string
		src  string
		vars func(testing.TB) *Vars
		want any
	}{
		{"rule under limit", "args.amount_paise > principal.limits.max_refund_paise", refundVars, false},
		{"rule over limit", "args.amount_paise > principal.limits.max_refund_paise", func(t testing.TB) *Vars {
			v := refundVars(t)
			v.Args["amount_paise"] = json.Number("500001")
			return v
		}, true},
		{"verify found", "result.refunds.exists(r, r.amount_paise == args.amount_paise)", refundVars, true},
		{"verify not found", "result.refunds.exists(r, r.amount_paise == 7)", refundVars, false},
		{"owner expect", "result.customer_id == principal.id", refundVars, true},
		{"state sum", "state.refunded_paise + args.amount_paise", refundVars, json.Number("525000")},
		{"big int exact", "state.big", refundVars, json.Number("9007199254740993")},
		{"big int arithmetic exact", "state.big + 1", refundVars, json.Number("9007199254740994")},
		{"uint beyond int64", "args.n", func(t testing.TB) *Vars {
			return &Vars{Args: mustObject(t, `{"n":18446744073709551615}`)}
		}, json.Number("18446744073709551615")},
		{"double", "args.x * 2.0", func(t testing.TB) *Vars { return &Vars{Args: mustObject(t, `{"x":1.25}`)} }, json.Number("2.5")},
		{"int vs double compare", "args.amount_paise > 424999.5", refundVars, true},
		{"double vs int compare", "principal.limits.ratio < 1", refundVars, true},
		{"int equals double", "args.n == 3.0", func(t testing.TB) *Vars { return &Vars{Args: mustObject(t, `{"n":3}`)} }, true},
		{"uint vs int compare", "args.n > 1", func(t testing.TB) *Vars {
			return &Vars{Args: mustObject(t, `{"n":18446744073709551615}`)}
		}, true},
		{"has on nil state", "has(state.x)", func(testing.TB) *Vars { return &Vars{} }, false},
		{"optional default on nil state", "state.?refunded_paise.orValue(0) + 5", func(testing.TB) *Vars { return &Vars{} }, json.Number("5")},
		{"has on missing limit", "has(principal.limits.max)", func(testing.TB) *Vars { return &Vars{Principal: &types.Principal{ID: "p"}} }, false},
		{"nil vars", "args.size() == 0 && principal.id == ''", func(testing.TB) *Vars { return nil }, true},
		{"permissions list", "'refunds:write' in principal.permissions", refundVars, true},
		{"nested attrs", "principal.attrs.region.code", refundVars, "IN"},
		{"ids", "[run_id, call_id, tool]", refundVars, []any{"r1", "toolu_1", "issue_refund"}},
		{"null result", "result == null", func(testing.TB) *Vars { return &Vars{} }, true},
		{"map result", "{'id': result.refunds[1].amount_paise, 'ok': true, 'none': null}", refundVars,
			map[string]any{"id": json.Number("425000"), "ok": true, "none": nil}},
		{"passthrough object", "result.refunds[0]", refundVars, map[string]any{"amount_paise": json.Number("1000")}},
		{"string ext", "args.order_id.lowerAscii()", refundVars, "ord-4471"},
		{"size of args", "size(args)", refundVars, json.Number("2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			got, err := p.Eval(tt.vars(t))
			if err != nil {
				t.Fatalf("Eval(%q): %v", tt.src, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name, src, want string
	}{
		{"missing key", "state.refunded_paise + 1", "no such key"},
		{"int overflow", "9223372036854775807 + args.one", "overflow"},
		{"cost limit", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))", "cost limit"},
		{"nan result", "0.0 / 0.0", "not a JSON number"},
		{"type value", "type(1)", "cannot be written as JSON"},
	}
	vars := &Vars{Args: map[string]any{"one": json.Number("1")}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			_, err = p.Eval(vars)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Eval(%q) error = %v, want one containing %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestEvalBool(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name    string
		src     string
		want    bool
		wantErr string
	}{
		{"true", "args.amount_paise == 425000", true, ""},
		{"false", "args.amount_paise < 0", false, ""},
		{"not a bool", "args.order_id", false, "a string, not a bool"},
		{"missing key", "args.nope > 1", false, "no such key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, err := p.EvalBool(refundVars(t))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("EvalBool error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("EvalBool = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name, src string
		asBool    bool
		want      []string
	}{
		{"empty", "  ", false, []string{"empty expression"}},
		{"undeclared", "arg.amount > 1", false, []string{"undeclared reference to 'arg'", "column 1"}},
		{"syntax", "args.amount >", false, []string{"Syntax error"}},
		{"two issues", "foo + bar", false, []string{"'foo'", "'bar'", ";"}},
		{"not bool", "1 + 2", true, []string{"yields int, want a bool"}},
		{"string not bool", "'x'", true, []string{"yields string"}},
		{"too long", strings.Repeat("1 + ", 2000) + "1", false, []string{"size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.asBool {
				_, err = env.CompileBool(tt.src)
			} else {
				_, err = env.Compile(tt.src)
			}
			if err == nil {
				t.Fatalf("Compile(%q) succeeded, want an error", tt.src)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	for _, ok := range []string{"args.x > 1", "has(state.x)", "true", "args.x"} {
		if _, err := env.CompileBool(ok); err != nil {
			t.Errorf("CompileBool(%q): %v", ok, err)
		}
	}
}

func TestProgramConcurrentEval(t *testing.T) {
	env := testEnv(t)
	p, err := env.Compile("result.refunds.exists(r, r.amount_paise == args.amount_paise)")
	if err != nil {
		t.Fatal(err)
	}
	if p.Source() != "result.refunds.exists(r, r.amount_paise == args.amount_paise)" {
		t.Errorf("Source() = %q", p.Source())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if ok, err := p.EvalBool(refundVars(t)); err != nil || !ok {
					t.Errorf("EvalBool = %v, %v", ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkEvalRule(b *testing.B) {
	env := testEnv(b)
	p, err := env.Compile("args.amount_paise > principal.limits.max_refund_paise")
	if err != nil {
		b.Fatal(err)
	}
	v := refundVars(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.EvalBool(v); err != nil {
			b.Fatal(err)
		}
	}
}
