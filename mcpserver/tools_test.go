package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// TestStructuredContentFollowsOutputSchema checks MCP's rule that
// structuredContent conforms to the tool's outputSchema, on a success and
// on a failure.
func TestStructuredContentFollowsOutputSchema(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	gw := gateway(t, configText(t, url))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema any
	for _, tool := range list.Tools {
		if tool.Name == "get_order" {
			schema = tool.OutputSchema
		}
	}
	if schema == nil {
		t.Fatal("get_order lists no outputSchema")
	}
	b, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("output.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{orderID, "ORD-9999"} { // found; 404 (rejected)
		res, env := mustCall(t, cs, "get_order", map[string]any{"order_id": order}, nil)
		if order != orderID && (env.OK || env.Error.Code != types.CodeRejected) {
			t.Fatalf("ORD-9999: want rejected, got %s", env.Observation)
		}
		b, _ := json.Marshal(res.StructuredContent)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: structuredContent does not follow the outputSchema: %v\n%s", order, err, b)
		}
	}
}

func TestToolsOfGoFunctionsAndUntypedSchemas(t *testing.T) {
	cfg := &config.Config{Store: "memory", Tools: map[string]*config.Tool{
		"server_time": {Description: "The clock.", Effect: types.EffectRead,
			Func: func(context.Context, json.RawMessage) (any, error) { return "now", nil }},
		"note": {Description: "Keep a note.", Effect: types.EffectWrite,
			Func:        func(context.Context, json.RawMessage) (any, error) { return nil, nil },
			InputSchema: map[string]any{"properties": map[string]any{"text": map[string]any{"type": "string"}}}},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	tools := mcpserver.Tools(cfg)
	if len(tools) != 2 || tools[0].Name != "note" || tools[1].Name != "server_time" {
		t.Fatalf("tools %v", tools)
	}
	for _, tool := range tools {
		if tool.Annotations.OpenWorldHint != nil {
			t.Errorf("%s: a Go tool claims openWorldHint %v", tool.Name, *tool.Annotations.OpenWorldHint)
		}
		if s := tool.InputSchema.(map[string]any); s["type"] != "object" {
			t.Errorf("%s: inputSchema %v has no type object", tool.Name, s)
		}
	}
	if props := tools[0].InputSchema.(map[string]any)["properties"]; props == nil {
		t.Error("note's properties were lost")
	}
}
