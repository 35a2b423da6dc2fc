package validate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/types"
)

func checkedRefund(t *testing.T, v *Validator, args string) *Checked {
	t.Helper()
	c, r := v.Check(&Input{Tool: "issue_refund", Args: json.RawMessage(args), Principal: alice, RunID: "r1", CallID: "toolu_1"})
	if r != nil {
		t.Fatalf("refused: %s: %s", r.Code, r.Message)
	}
	return c
}

// argsJSON is a lookup's arguments as JSON, to compare.
func argsJSON(t *testing.T, l *Lookup) string {
	t.Helper()
	b, err := json.Marshal(l.Args)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLookups(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	verify, err := v.verifyLookup(c)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  func() (*Lookup, error)
		tool string
		want string
	}{
		{"owner, prepared by Check", func() (*Lookup, error) { return c.Owner, nil }, "get_order", `{"order_id":"ORD-4471"}`},
		{"verify", func() (*Lookup, error) { return verify, nil }, "list_refunds", `{"order_id":"ORD-4471"}`},
		{"none", func() (*Lookup, error) { return v.lookup(c, "get_order", nil) }, "get_order", `{}`},
		{"computed and exact", func() (*Lookup, error) {
			p, err := v.Env().Compile("args.amount_paise * 1000000000000")
			if err != nil {
				return nil, err
			}
			q, _ := v.Env().Compile("principal.id")
			return v.lookup(c, "get_order", map[string]*expr.Program{"n": p, "who": q})
		}, "get_order", `{"n":425000000000000000,"who":"cust_42"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Tool.Name != tt.tool || argsJSON(t, got) != tt.want {
				t.Errorf("lookup = %+v, want %s with %s", got, tt.tool, tt.want)
			}
		})
	}
	p, _ := v.Env().Compile("args.nope")
	if _, err := v.lookup(c, "get_order", map[string]*expr.Program{"x": p}); err == nil || !strings.Contains(err.Error(), "lookup argument x (args.nope)") {
		t.Errorf("lookup error = %v", err)
	}
	if _, err := v.lookup(c, "no_such_tool", nil); err == nil || !strings.Contains(err.Error(), `lookup tool "no_such_tool" is not configured`) {
		t.Errorf("lookup of an unknown tool: error = %v", err)
	}
	g, r := v.Check(&Input{Tool: "get_order", Args: json.RawMessage(`{"order_id":"ORD-1"}`)})
	if r != nil {
		t.Fatal(r.Message)
	}
	if g.Owner != nil || g.Quotas != nil {
		t.Errorf("a read without owner: Owner = %+v, Quotas = %+v", g.Owner, g.Quotas)
	}
	if _, err := v.verifyLookup(g); err == nil {
		t.Error("verifyLookup on a tool without verify succeeded")
	}
}

func TestOwnerVerdictAndVerified(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	owner := []struct {
		name  string
		data  string
		found bool
		owns  bool
	}{
		{"owner matches", `{"customer_id":"cust_42","total":425000}`, true, true},
		{"owner differs", `{"customer_id":"cust_7"}`, true, false},
		{"owner data lacks the field", `{}`, true, false},
		{"owner data not JSON", `<html>`, true, false},
		{"no such object", ``, false, false},
		{"an answer that matches, but the lookup said not found", `{"customer_id":"cust_42"}`, false, false},
	}
	for _, tt := range owner {
		t.Run(tt.name, func(t *testing.T) {
			r := c.ownerVerdict(json.RawMessage(tt.data), tt.found)
			if (r == nil) != tt.owns || (r != nil && r.Code != types.CodeNotOwner) {
				t.Errorf("ownerVerdict = %+v, want owns %v", r, tt.owns)
			}
		})
	}
	verified := []struct {
		name    string
		data    string
		found   bool
		wantErr string
	}{
		{"verify found", `{"refunds":[{"amount_paise":1000},{"amount_paise":425000}]}`, true, ""},
		{"verify not found", `{"refunds":[{"amount_paise":1000}]}`, false, ""},
		{"verify empty list", `{"refunds":[]}`, false, ""},
		{"verify data not JSON", `<html>`, false, "verify.found: lookup data: invalid JSON"},
		{"verify data of another shape", `{}`, false, "verify.found ("},
	}
	for _, tt := range verified {
		t.Run(tt.name, func(t *testing.T) {
			found, answer, err := c.verified(json.RawMessage(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || found != tt.found || string(answer) != tt.data {
				t.Errorf("verified = %v, %s, %v; want %v, %s", found, answer, err, tt.found, tt.data)
			}
		})
	}
	if c.Vars.Result != nil {
		t.Error("judging changed the Checked's Vars")
	}
	g, r := v.Check(&Input{Tool: "get_order", Args: json.RawMessage(`{"order_id":"ORD-1"}`)})
	if r != nil {
		t.Fatal(r.Message)
	}
	if g.ownerVerdict(json.RawMessage(`{}`), true) == nil {
		t.Error("ownerVerdict on a tool without owner admitted the call")
	}
	if _, _, err := g.verified(json.RawMessage(`{}`)); err == nil {
		t.Error("verified on a tool without verify succeeded")
	}
}

func TestNotOwner(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	r := c.ownerVerdict(nil, false)
	if r == nil || r.Code != types.CodeNotOwner || r.Field != "order_id" || r.Rule != -1 {
		t.Fatalf("refusal = %+v", r)
	}
	for _, want := range []string{`order_id "ORD-4471"`, "does not belong to principal cust_42", "checked with get_order", "Do not retry with the same id"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message lacks %q: %s", want, r.Message)
		}
	}
}
