package validate

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/internal/jsontext"
)

// flatSchema uses every keyword the fast path knows.
var flatSchema = map[string]any{
	"type":        "object",
	"description": "A refund.",
	"required":    []any{"order_id", "amount_paise"},
	"properties": map[string]any{
		"order_id":     map[string]any{"type": "string", "pattern": "^ORD-[0-9]+$", "minLength": 5, "maxLength": 12},
		"amount_paise": map[string]any{"type": "integer", "minimum": 1, "maximum": 500000},
		"ratio":        map[string]any{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
		"reason":       map[string]any{"type": "string", "enum": []any{"damaged", "late", "other"}},
		"note":         map[string]any{"type": []any{"string", "null"}, "maxLength": 3},
		"urgent":       map[string]any{"type": "boolean", "default": false},
		"anything":     map[string]any{"description": "any type"},
	},
	"additionalProperties": false,
}

// TestFastSchemaAgrees: the fast path compiles for flat schemas only,
// decides the common valid arguments itself, and never calls valid what the
// jsonschema validator refuses.
func TestFastSchemaAgrees(t *testing.T) {
	as, problems := compileSchema(nil, "refund", flatSchema)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if as.fast == nil {
		t.Fatal("a flat schema has no fast path")
	}
	for _, tc := range []struct {
		args string
		fast bool // the fast path decides (valid)
	}{
		{`{"order_id":"ORD-4471","amount_paise":425000}`, true},
		{`{"order_id":"ORD-4471","amount_paise":1,"ratio":5,"reason":"late","note":null,"urgent":true,"anything":[1]}`, true},
		{`{"order_id":"ORD-4471","amount_paise":500000,"note":"abc","anything":"x"}`, true},
		{`{"order_id":"ORD-4471","amount_paise":425000.0}`, false}, // valid, for the validator to judge
		{`{"order_id":"ORD-4471","amount_paise":4.25e5}`, false},
		{`{"order_id":"ORD-4471","amount_paise":0}`, false},
		{`{"order_id":"ORD-4471","amount_paise":500001}`, false},
		{`{"order_id":"ORD-4471","amount_paise":99999999999999999999}`, false},
		{`{"order_id":"ORD-4471","amount_paise":"5"}`, false},
		{`{"order_id":"ord-4471","amount_paise":5}`, false},
		{`{"order_id":"ORD-1234567890","amount_paise":5}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"ratio":0}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"ratio":100}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"ratio":99.5}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"reason":"bored"}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"note":"abcd"}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"note":"日本語"}`, true}, // 3 characters, 9 bytes
		{`{"order_id":"ORD-4471","amount_paise":5,"urgent":"yes"}`, false},
		{`{"order_id":"ORD-4471","amount_paise":5,"extra":1}`, false},
		{`{"order_id":"ORD-4471"}`, false},
		{`{"order_id":"ORD-4471","amount_paise":true}`, false},
		{`{"order_id":null,"amount_paise":5}`, false},
	} {
		args, err := jsontext.DecodeObject(json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		fast := as.fast.valid(args)
		if fast != tc.fast {
			t.Errorf("%s: fast path says %v, want %v", tc.args, fast, tc.fast)
		}
		if fast {
			if err := as.schema.Validate(any(args)); err != nil {
				t.Errorf("%s: fast path says valid, the validator refuses: %v", tc.args, err)
			}
		}
	}

	for name, schema := range map[string]map[string]any{
		"nested object": {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "object"}}},
		"array":         {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "array"}}},
		"format":        {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "format": "email"}}},
		"multipleOf":    {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer", "multipleOf": 5}}},
		"fraction":      {"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number", "minimum": 0.5}}},
		"number enum":   {"type": "object", "properties": map[string]any{"a": map[string]any{"enum": []any{1, 2}}}},
		"const":         {"type": "object", "properties": map[string]any{"a": map[string]any{"const": "x"}}},
		"oneOf":         {"type": "object", "oneOf": []any{map[string]any{"required": []any{"a"}}}},
		"minProperties": {"type": "object", "minProperties": 1},
		"extras schema": {"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"patternProps":  {"type": "object", "patternProperties": map[string]any{"^x": map[string]any{"type": "string"}}},
		"ref":           {"type": "object", "$defs": map[string]any{"id": map[string]any{"type": "string"}}, "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/id"}}},
		"old draft":     {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
	} {
		as, problems := compileSchema(nil, "t", schema)
		if len(problems) > 0 {
			t.Fatalf("%s: %v", name, problems)
		}
		if as.fast != nil {
			t.Errorf("%s: compiled a fast path for a schema that is not flat", name)
		}
	}
}

// FuzzFastSchema: whatever the fast path calls valid, the validator
// accepts.
func FuzzFastSchema(f *testing.F) {
	as, problems := compileSchema(nil, "refund", flatSchema)
	if len(problems) > 0 || as.fast == nil {
		f.Fatal(problems)
	}
	f.Add("ORD-4471", "425000", "5", "late", "abc", "true", "[1]")
	f.Add("ORD-1", "-0", "0.5", "", "\xff\xfe", "null", `{"a":"b"}`)
	f.Add("ORD-1", "7", "1", "other", "", "false", "null")
	f.Fuzz(func(t *testing.T, order, amount, ratio, reason, note, urgent, anything string) {
		q := func(s string) string {
			if s == "" {
				return "null"
			}
			return strconv.Quote(s)
		}
		raw := `{"order_id":` + strconv.Quote(order) + `,"amount_paise":` + amount + `,"ratio":` + ratio +
			`,"reason":` + q(reason) + `,"note":` + q(note) + `,"urgent":` + urgent + `,"anything":` + anything + `}`
		args, err := jsontext.DecodeObject(json.RawMessage(raw))
		if err != nil {
			return
		}
		if as.fast.valid(args) {
			if err := as.schema.Validate(any(args)); err != nil {
				t.Fatalf("%s: fast path says valid, the validator refuses: %v", raw, err)
			}
		}
	})
}
