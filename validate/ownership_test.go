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

func TestLookupArgs(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	tests := []struct {
		name string
		got  func() (json.RawMessage, error)
		want string
	}{
		{"owner", func() (json.RawMessage, error) { return v.LookupArgs(c.Tool.OwnerArgs, c) }, `{"order_id":"ORD-4471"}`},
		{"verify", func() (json.RawMessage, error) { return v.LookupArgs(c.Tool.VerifyArgs, c) }, `{"order_id":"ORD-4471"}`},
		{"none", func() (json.RawMessage, error) { return v.LookupArgs(nil, c) }, `{}`},
		{"computed and exact", func() (json.RawMessage, error) {
			p, err := v.Env().Compile("args.amount_paise * 1000000000000")
			if err != nil {
				return nil, err
			}
			q, _ := v.Env().Compile("principal.id")
			return v.LookupArgs(map[string]*expr.Program{"n": p, "who": q}, c)
		}, `{"n":425000000000000000,"who":"cust_42"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("LookupArgs = %s, want %s", got, tt.want)
			}
		})
	}
	p, _ := v.Env().Compile("args.nope")
	if _, err := v.LookupArgs(map[string]*expr.Program{"x": p}, c); err == nil || !strings.Contains(err.Error(), "lookup argument x (args.nope)") {
		t.Errorf("LookupArgs error = %v", err)
	}
}

func TestOwnerAcceptsAndVerifyFinds(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	tests := []struct {
		name    string
		judge   func(json.RawMessage) (bool, error)
		data    string
		want    bool
		wantErr string
	}{
		{"owner matches", func(d json.RawMessage) (bool, error) { return v.OwnerAccepts(c, d) }, `{"customer_id":"cust_42","total":425000}`, true, ""},
		{"owner differs", func(d json.RawMessage) (bool, error) { return v.OwnerAccepts(c, d) }, `{"customer_id":"cust_7"}`, false, ""},
		{"owner data lacks the field", func(d json.RawMessage) (bool, error) { return v.OwnerAccepts(c, d) }, `{}`, false, "owner.expect (result.customer_id == principal.id): no such key"},
		{"owner data not JSON", func(d json.RawMessage) (bool, error) { return v.OwnerAccepts(c, d) }, `<html>`, false, "lookup data: invalid JSON"},
		{"verify found", func(d json.RawMessage) (bool, error) { return v.VerifyFinds(c, d) },
			`{"refunds":[{"amount_paise":1000},{"amount_paise":425000}]}`, true, ""},
		{"verify not found", func(d json.RawMessage) (bool, error) { return v.VerifyFinds(c, d) }, `{"refunds":[{"amount_paise":1000}]}`, false, ""},
		{"verify empty list", func(d json.RawMessage) (bool, error) { return v.VerifyFinds(c, d) }, `{"refunds":[]}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.judge(json.RawMessage(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
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
	if _, err := v.OwnerAccepts(g, json.RawMessage(`{}`)); err == nil {
		t.Error("OwnerAccepts on a tool without owner succeeded")
	}
	if _, err := v.VerifyFinds(g, json.RawMessage(`{}`)); err == nil {
		t.Error("VerifyFinds on a tool without verify succeeded")
	}
}

func TestNotOwner(t *testing.T) {
	v := setup(t)
	c := checkedRefund(t, v, `{"order_id":"ORD-4471","amount_paise":425000}`)
	r := NotOwner(c)
	if r.Code != types.CodeNotOwner || r.Field != "order_id" || r.Rule != -1 {
		t.Errorf("refusal = %+v", r)
	}
	for _, want := range []string{`order_id "ORD-4471"`, "does not belong to principal cust_42", "checked with get_order", "Do not retry with the same id"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message lacks %q: %s", want, r.Message)
		}
	}
}
