package export

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
)

// exportYAML is the refunds fixture's get_order with an output schema, an
// idempotent set_address, and issue_refund with an amount's maximum beyond
// 2^53 and a verify read through get_order.
var exportYAML = refunds.Config("http://127.0.0.1:9001", refunds.Delete("store"),
	refunds.Set("tools.get_order.output_schema", "{type: object, properties: {customer_id: {type: string}}}"),
	refunds.Delete("tools.list_refunds", "tools.issue_refund.effect", "tools.issue_refund.idempotency", "tools.issue_refund.rules",
		"tools.issue_refund.owner", "tools.issue_refund.state"),
	refunds.Set("tools.issue_refund.input_schema.properties.amount_paise.maximum", "9007199254740993"),
	refunds.Set("tools.issue_refund.verify", `{lookup: get_order, args: {order_id: "args.order_id"}, found: "true"}`),
	refunds.Add("tools", `set_address:
  description: Set the delivery address.
  dependency: payments
  request: {method: PUT, path: "/orders/{order_id}/address"}
  effect: idempotent
  input_schema:
    type: object
    required: [order_id, city]
    properties: {order_id: {type: string}, city: {type: string, minLength: 1}}
    additionalProperties: false
`))

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(exportYAML), "toolgate.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFormats(t *testing.T) {
	cfg := testConfig(t)
	tests := []struct {
		format string
		want   []string
		not    []string
	}{
		{"", []string{
			`{"tools":[{"name":"get_order","description":"Look up one order.","effect":"read","dependency":"payments","input_schema":{`,
			`"name":"issue_refund","description":"Refund part or all of an order to the customer.","effect":"write","permission":"refunds:write"`,
			`"verify_with":"get_order"`, `"maximum":9007199254740993`,
		}, nil},
		{"openai", []string{
			`[{"type":"function","function":{"name":"get_order","description":"Look up one order.","parameters":{"additionalProperties":false,"properties":{"order_id":{"type":"string"}},"required":["order_id"],"type":"object"},"strict":true}}`,
			`{"type":"function","function":{"name":"issue_refund","description":"Refund part or all of an order to the customer.","parameters":{`,
		}, []string{`"effect"`, `"input_schema"`}},
		{"anthropic", []string{
			`[{"name":"get_order","description":"Look up one order.","input_schema":{"additionalProperties":false,"properties":{"order_id":{"type":"string"}},"required":["order_id"],"type":"object"}}`,
		}, []string{`"strict"`, `"parameters"`}},
		{"MCP", []string{
			`{"name":"get_order","description":"Look up one order.","inputSchema":{`,
			`"outputSchema":{"properties":{"data":{"anyOf":[{"properties":{"customer_id":{"type":"string"}},"type":"object"},{"type":"null"}]},`,
			`"annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":true}}`,
			`"name":"set_address"`, `"annotations":{"readOnlyHint":false,"idempotentHint":true,"destructiveHint":true,"openWorldHint":true}`,
			`"annotations":{"readOnlyHint":false,"idempotentHint":false,"destructiveHint":true,"openWorldHint":true}`,
		}, []string{`"input_schema"`}},
		{"openai-responses", []string{
			`[{"type":"function","name":"get_order","description":"Look up one order.","parameters":{"additionalProperties":false,"properties":{"order_id":{"type":"string"}},"required":["order_id"],"type":"object"},"strict":true}`,
			`{"type":"function","name":"issue_refund","description":"Refund part or all of an order to the customer.","parameters":{`,
			`"required":["order_id","amount_paise"],"type":"object"},"strict":false}`,
		}, []string{`"function":{`, `"input_schema"`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			v, err := Format(cfg, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			got := encode(t, v)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %s\nin %s", w, got)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("has %s\nin %s", w, got)
				}
			}
		})
	}
	if _, err := Format(cfg, "gemini"); err == nil || !strings.Contains(err.Error(), "openai, openai-responses, anthropic, mcp") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestOpenAIStrictOnlyWhenCompatible(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
	}{
		{"closed, all required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, true},
		{"optional property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"nested open object", `{"type":"object","properties":{"a":{"type":"object","properties":{}}},"required":["a"],"additionalProperties":false}`, false},
		{"nested closed object", `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}},"required":["a"],"additionalProperties":false}`, true},
		{"unsupported keyword", `{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`, false},
		{"array items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]}}},"required":["a"],"additionalProperties":false}`, true},
		{"no arguments", `{"type":"object","properties":{},"additionalProperties":false}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			cfg := &config.Config{Tools: map[string]*config.Tool{"t": {Name: "t", Description: "d", InputSchema: schema}}}
			f := OpenAI(cfg)[0].Function
			if got := f.Strict != nil && *f.Strict; got != tt.strict {
				t.Errorf("strict = %v, want %v", got, tt.strict)
			}
		})
	}
}

func TestAnnotations(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		effect types.Effect
		want   MCPAnnotations
	}{
		{types.EffectRead, MCPAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no}},
		{types.EffectIdempotent, MCPAnnotations{IdempotentHint: true, DestructiveHint: &yes}},
		{types.EffectWrite, MCPAnnotations{DestructiveHint: &yes}},
		{"", MCPAnnotations{DestructiveHint: &yes}},
	}
	for _, tt := range tests {
		if got := Annotations(tt.effect); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Annotations(%q) = %+v, want %+v", tt.effect, got, tt.want)
		}
	}
}

// The exports are copies: changing one leaves the config as it was.
func TestSchemasAreCopies(t *testing.T) {
	cfg := testConfig(t)
	tools := Anthropic(cfg)
	tools[0].InputSchema["properties"].(map[string]any)["order_id"].(map[string]any)["type"] = "integer"
	if got := encode(t, cfg.Tools["get_order"].InputSchema); !strings.Contains(got, `"order_id":{"type":"string"}`) {
		t.Fatalf("the config changed: %s", got)
	}
}

func TestEmptyConfig(t *testing.T) {
	for _, f := range []string{"", "openai", "anthropic", "mcp"} {
		v, err := Format(&config.Config{}, f)
		if err != nil {
			t.Fatal(err)
		}
		if got := encode(t, v); got != "[]" && got != `{"tools":[]}` {
			t.Errorf("%s of no tools: %s", f, got)
		}
	}
}
