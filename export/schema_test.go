package export

import (
	"encoding/json"
	"testing"
)

func TestNormalized(t *testing.T) {
	tests := []struct {
		name, in, want, model string
	}{
		{"draft-07 root dropped, nested dropped",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$schema":"x","type":"string"},"$schema":{"type":"string"}}}`,
			`{"properties":{"$schema":{"type":"string"},"a":{"type":"string"}},"type":"object"}`,
			`{"properties":{"$schema":{"type":"string"},"a":{"type":"string"}},"type":"object"}`},
		{"2020-12 root kept for MCP, dropped for models",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
			`{"type":"object"}`},
		{"definitions and tuples rewritten",
			`{"type":"object","definitions":{"p":{"type":"array","items":[{"type":"number"}],"additionalItems":false}},"properties":{"x":{"$ref":"#/definitions/p"}}}`,
			`{"$defs":{"p":{"items":false,"prefixItems":[{"type":"number"}],"type":"array"}},"properties":{"x":{"$ref":"#/$defs/p"}},"type":"object"}`,
			`{"$defs":{"p":{"items":false,"prefixItems":[{"type":"number"}],"type":"array"}},"properties":{"x":{"$ref":"#/$defs/p"}},"type":"object"}`},
		{"values untouched", `{"const":{"$schema":1},"enum":[{"items":[1]}]}`, `{"const":{"$schema":1},"enum":[{"items":[1]}]}`, `{"const":{"$schema":1},"enum":[{"items":[1]}]}`},
	}
	for _, tt := range tests {
		var in map[string]any
		if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(normalized(in))
		model, _ := json.Marshal(modelSchema(in))
		if string(got) != tt.want || string(model) != tt.model {
			t.Errorf("%s:\n got %s\n     %s\nwant %s\n     %s", tt.name, got, model, tt.want, tt.model)
		}
		if again, _ := json.Marshal(in); string(again) != mustCompact(t, tt.in) {
			t.Errorf("%s: the tool's own schema was changed: %s", tt.name, again)
		}
	}
	env, _ := json.Marshal(EnvelopeSchema(map[string]any{"$schema": dialect2020, "type": "object"}))
	if json.Valid(env) && contains(string(env), `$schema`) {
		t.Errorf("the envelope schema nests $schema: %s", env)
	}
}

func mustCompact(t *testing.T, s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
