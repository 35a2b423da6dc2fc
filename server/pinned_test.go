package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

func TestWithinPinned(t *testing.T) {
	pinned := &types.Principal{ID: "cust_7", Permissions: []string{"refunds:write", "orders:read"},
		Limits: map[string]json.Number{"max_refund_paise": "9007199254740993"}, Attrs: map[string]any{"tier": "gold", "n": 3}}
	tests := []struct {
		name   string
		asked  *types.Principal
		forbid string // in the message; "" when allowed
		want   string // the principal's JSON when allowed
	}{
		{"left out", nil, "", `{"id":"cust_7","permissions":["refunds:write","orders:read"],"limits":{"max_refund_paise":9007199254740993},"attrs":{"n":3,"tier":"gold"}}`},
		{"a limit one above, exactly", &types.Principal{ID: "cust_7", Limits: map[string]json.Number{"max_refund_paise": "9007199254740994"}}, "max_refund_paise", ""},
		{"the same limit written otherwise", &types.Principal{ID: "cust_7", Limits: map[string]json.Number{"max_refund_paise": "9.007199254740993e15"}}, "",
			`{"id":"cust_7","permissions":["refunds:write","orders:read"],"limits":{"max_refund_paise":9.007199254740993e15},"attrs":{"n":3,"tier":"gold"}}`},
		{"an attribute from JSON equal to the one from YAML", &types.Principal{ID: "cust_7", Permissions: []string{}, Attrs: map[string]any{"n": json.Number("3")}}, "",
			`{"id":"cust_7","limits":{"max_refund_paise":9007199254740993},"attrs":{"n":3,"tier":"gold"}}`},
		{"an attribute it does not have", &types.Principal{ID: "cust_7", Attrs: map[string]any{"admin": true}}, `"admin"`, ""},
		{"a permission it lacks", &types.Principal{ID: "cust_7", Permissions: []string{"orders:read", "*"}}, `"*"`, ""},
		{"another id", &types.Principal{ID: "cust_8"}, `"cust_8"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := withinPinned(pinned, tt.asked)
			if tt.forbid != "" {
				if e == nil || e.code != types.CodeForbidden || e.status != 403 || !strings.Contains(e.message, tt.forbid) {
					t.Fatalf("got %+v, %+v; want 403 forbidden naming %s", p, e, tt.forbid)
				}
				return
			}
			if e != nil {
				t.Fatalf("refused: %s", e.message)
			}
			if got, _ := json.Marshal(p); string(got) != tt.want {
				t.Fatalf("principal %s, want %s", got, tt.want)
			}
		})
	}
	if len(pinned.Permissions) != 2 || pinned.Attrs["tier"] != "gold" {
		t.Fatalf("the pinned principal changed: %+v", pinned)
	}
}
