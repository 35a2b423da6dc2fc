package expr

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestForSchemaTypesArgs: in an environment made from a tool's input
// schema, what can never work at run time is a compile error, and what can
// still compiles and evaluates against the map args really is.
func TestForSchemaTypesArgs(t *testing.T) {
	base, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	env, err := base.ForSchema(map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"amount_paise": map[string]any{"type": "integer"},
			"order_id":     map[string]any{"type": "string"},
			"price":        map[string]any{"type": "number"},
			"tags":         map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		src, wantErr string // "" = compiles
		kind         string // bool or int
	}{
		{"args.amount > 5", "undefined field 'amount' (the input schema declares amount_paise, order_id, price, tags; did you mean amount_paise?)", "bool"},
		{"args.amount_paise", "yields int, want a bool", "bool"},
		{"args.order_id > 5", "no matching overload for '_>_' applied to '(string, int)'", "bool"},
		{"args.amount_paise > 5 && has(args.order_id)", "", "bool"},
		{"args.price > 2 && 'x' in args.tags", "", "bool"},
		{"args.amount_paise > principal.limits.max_refund_paise", "", "bool"},
		{"principal.id == 5", "no matching overload", "bool"},
		{"args.amount_paise", "", "int"},
		{"args.order_id", "yields string, want an integer", "int"},
	}
	for _, tt := range tests {
		var err error
		if tt.kind == "int" {
			_, err = env.CompileInt(tt.src)
		} else {
			_, err = env.CompileBool(tt.src)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.src, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.src, err, tt.wantErr)
		}
		if _, err := base.CompileBool(tt.src); err != nil && tt.wantErr == "" {
			t.Errorf("%s: the untyped environment refuses it: %v", tt.src, err)
		}
	}
	p, err := env.CompileBool("args.amount_paise > 400000 && args.order_id.startsWith('ORD-')")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.EvalBool(&Vars{Args: map[string]any{"amount_paise": json.Number("425000"), "order_id": "ORD-1"}})
	if err != nil || !got {
		t.Errorf("typed rule over real args: %v, %v; want true", got, err)
	}
}
