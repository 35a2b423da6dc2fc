package types

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParsePrincipal: a well-formed principal is read with its numbers
// exact; every malformed one is refused with a message naming what is wrong.
func TestParsePrincipal(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		wantErr   string // a part of the message; "" when the document is good
		wantID    string
	}{
		{"full", `{"id":"cust_42","permissions":["refunds:write"],"limits":{"max_refund_paise":500000.10},"attrs":{"tier":"gold"}}`, "", "cust_42"},
		{"id only, spaced", " \n{\"id\":\"c\"} ", "", "c"},
		{"not an object", `["cust_42"]`, `"principal" must be a JSON object such as {"id": "cust_42"}, got an array`, ""},
		{"blank", ``, "got nothing", ""},
		{"no id", `{"permissions":["a"]}`, "principal.id is required", ""},
		{"unknown field", `{"id":"x","permisions":["a"]}`, `principal has no field "permisions"; valid: id, permissions, limits, attrs`, ""},
		{"wrong kind", `{"id":"x","permissions":"a"}`, "principal.permissions must be an array, got a JSON string", ""},
		{"limit not a number", `{"id":"x","limits":{"max":"lots"}}`, "principal", ""},
		{"broken JSON", `{"id":`, "principal: ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePrincipal([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || p.ID != tc.wantID {
				t.Fatalf("got %+v, %v; want id %q", p, err, tc.wantID)
			}
		})
	}
	p, err := ParsePrincipal([]byte(`{"id":"c","limits":{"max_refund_paise":500000.10}}`))
	if err != nil || p.Limits["max_refund_paise"] != json.Number("500000.10") {
		t.Fatalf("limits %v (%v): the number must be kept exact", p.Limits, err)
	}
}

// TestJSONKind names each kind by its first byte.
func TestJSONKind(t *testing.T) {
	for raw, want := range map[string]string{
		`{}`: "an object", ` [1]`: "an array", `"s"`: "a string", `true`: "a boolean",
		`false`: "a boolean", `null`: "null", `-1.5`: "a number", "  \t": "nothing",
	} {
		if got := JSONKind([]byte(raw)); got != want {
			t.Errorf("JSONKind(%q) = %q, want %q", raw, got, want)
		}
	}
}
