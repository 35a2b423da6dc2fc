// Package sdkcheck_test checks the tool lists of package export against the
// tool-definition types of each ecosystem's own SDK: the exported JSON is
// decoded into the SDK's structs, rebuilt from their typed fields alone,
// marshalled again, and compared with what export wrote. Anything the SDK
// types cannot carry (a field, a schema keyword, a digit of a number) would
// show up as a difference.
package sdkcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/toolsource/openapi"
	"github.com/toolgate/toolgate/types"
)

// configs are the configurations whose exports are checked: the contract's
// refunds fixture, and one with the schema keywords tools use in practice.
func configs(t *testing.T) map[string]*config.Config {
	t.Helper()
	refundsConfig, err := config.Parse([]byte(refunds.Config("http://127.0.0.1:9001")), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rich := &config.Config{
		Store:        "memory",
		Dependencies: map[string]*config.Dependency{"crm": {BaseURL: "http://127.0.0.1:1"}},
		Tools: map[string]*config.Tool{
			"find_customers": {
				Description: `Search customers by name, e-mail or "ID"; returns at most 20 (ünïcödé ok).`,
				Dependency:  "crm", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/customers"},
				InputSchema: map[string]any{
					"type": "object", "required": []any{"query"}, "additionalProperties": false,
					"properties": map[string]any{
						"query":  map[string]any{"type": "string", "minLength": 2, "maxLength": 200, "description": "Free text."},
						"status": map[string]any{"enum": []any{"active", "closed", nil}},
						"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 20, "default": 10},
						"since":  map[string]any{"type": "string", "format": "date-time"},
						"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "uniqueItems": true},
						"balance": map[string]any{"anyOf": []any{
							map[string]any{"type": "number", "multipleOf": 0.01},
							map[string]any{"type": "null"},
						}},
						"address": map[string]any{"$ref": "#/$defs/address"},
					},
					"$defs": map[string]any{"address": map[string]any{
						"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
					}},
				},
				OutputSchema: map[string]any{"type": "object", "properties": map[string]any{
					"customers": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}}},
			},
			"close_account": {
				Description: "Close a customer's account (closing a closed account changes nothing).",
				Dependency:  "crm", Effect: types.EffectIdempotent,
				Request: &config.Request{Method: "DELETE", Path: "/customers/{customer_id}"},
				InputSchema: map[string]any{
					"type": "object", "required": []any{"customer_id", "reason"}, "additionalProperties": false,
					"properties": map[string]any{
						"customer_id": map[string]any{"type": "string", "pattern": "^C[0-9]{6}$"},
						"reason":      map[string]any{"type": "string"},
					},
				},
			},
			"credit_account": {
				Description: "Credit an amount in paise.",
				Dependency:  "crm", Effect: types.EffectWrite,
				Request: &config.Request{Method: "POST", Path: "/credits"},
				InputSchema: map[string]any{
					"type": "object", "required": []any{"customer_id", "amount_paise"},
					"properties": map[string]any{
						"customer_id":  map[string]any{"type": "string"},
						"amount_paise": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000000000},
					},
				},
			},
			"server_time": {
				Description: "The server's clock.", Effect: types.EffectRead,
				Func: func(context.Context, json.RawMessage) (any, error) { return "now", nil },
			},
		},
	}
	if err := rich.Normalize(); err != nil {
		t.Fatal(err)
	}
	return map[string]*config.Config{"refunds": refundsConfig, "rich": rich,
		"petstore": imported(t, "../../testdata/openapi/petstore/petstore.yaml"),
	}
}

// withGitHub is configs plus every operation of GitHub's REST API
// description (about a thousand tools nobody here wrote).
func withGitHub(t *testing.T) map[string]*config.Config {
	t.Helper()
	all := configs(t)
	all["github"] = imported(t, npmfixture.Path(t, "@octokit/openapi", "generated/api.github.com.json"))
	return all
}

// imported is a config whose tools are every operation of an OpenAPI
// document, as toolgate tools lists them.
func imported(t *testing.T, document string) *config.Config {
	t.Helper()
	importedMu.Lock()
	defer importedMu.Unlock()
	if cfg := importedCache[document]; cfg != nil {
		return cfg
	}
	cfg := &config.Config{Store: "memory", Dependencies: map[string]*config.Dependency{
		"api": {BaseURL: "http://127.0.0.1:1", OpenAPI: document},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	lists, _, err := openapi.ImportAll(t.Context(), cfg, openapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		t.Fatal(err)
	}
	importedCache[document] = merged
	return merged
}

// importedCache keeps each document's config for the tests after the
// first (the exports never change a config).
var (
	importedMu    sync.Mutex
	importedCache = map[string]*config.Config{}
)

func TestOpenAI(t *testing.T) {
	for name, cfg := range withGitHub(t) {
		t.Run(name, func(t *testing.T) {
			exported := export.OpenAI(cfg)
			want := elements(t, exported)
			var union []openai.ChatCompletionToolUnionParam
			decode(t, want, &union)
			if len(union) != len(cfg.Tools) {
				t.Fatalf("%d tools decoded, want %d", len(union), len(cfg.Tools))
			}
			for i, u := range union {
				f := u.GetFunction()
				if f == nil || u.GetType() == nil || *u.GetType() != "function" {
					t.Fatalf("tool %d is not a function tool: %s", i, want[i])
				}
				spec := cfg.Tools[f.Name]
				if spec == nil || f.Description.Value != spec.Description {
					t.Errorf("tool %d: name %q description %q do not match the config", i, f.Name, f.Description.Value)
				}
				// Rebuild from the typed fields only.
				rebuilt := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: f.Name, Description: f.Description, Parameters: f.Parameters, Strict: f.Strict,
				})
				same(t, f.Name, want[i], rebuilt)
				sameValue(t, f.Name+" parameters", map[string]any(f.Parameters), exported[i].Function.Parameters)
			}
		})
	}
}

func TestOpenAIResponses(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			exported := export.OpenAIResponses(cfg)
			want := elements(t, exported)
			var union []responses.ToolUnionParam
			decode(t, want, &union)
			var tools []responses.FunctionTool // the type the API answers with
			decode(t, want, &tools)
			if len(union) != len(cfg.Tools) {
				t.Fatalf("%d tools decoded, want %d", len(union), len(cfg.Tools))
			}
			for i, u := range union {
				f := u.OfFunction
				if f == nil || u.GetType() == nil || *u.GetType() != "function" {
					t.Fatalf("tool %d is not a Responses function tool: %s", i, want[i])
				}
				spec := cfg.Tools[f.Name]
				if spec == nil || f.Description.Value != spec.Description {
					t.Errorf("tool %d: name %q description %q do not match the config", i, f.Name, f.Description.Value)
				}
				if !f.Strict.Valid() || f.Strict.Value != exported[i].Strict || tools[i].Strict != exported[i].Strict {
					t.Errorf("%s: strict %v (FunctionTool %v), want it present and %v", f.Name, f.Strict, tools[i].Strict, exported[i].Strict)
				}
				// Rebuild from the typed fields only.
				rebuilt := responses.FunctionToolParam{Name: f.Name, Description: f.Description, Parameters: f.Parameters, Strict: f.Strict}
				same(t, f.Name, want[i], rebuilt)
				sameValue(t, f.Name+" parameters", f.Parameters, exported[i].Parameters)
			}
		})
	}
}

func TestAnthropic(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			exported := export.Anthropic(cfg)
			want := elements(t, exported)
			var tools []anthropic.ToolParam
			decode(t, want, &tools)
			var union []anthropic.ToolUnionParam
			decode(t, want, &union)
			for i, tp := range tools {
				spec := cfg.Tools[tp.Name]
				if spec == nil || tp.Description.Value != spec.Description {
					t.Errorf("tool %d: name %q description %q do not match the config", i, tp.Name, tp.Description.Value)
				}
				if union[i].OfTool == nil || union[i].OfTool.Name != tp.Name {
					t.Errorf("tool %d does not decode as a custom tool in the ToolUnionParam", i)
				}
				s := tp.InputSchema
				rebuilt := anthropic.ToolParam{
					Name: tp.Name, Description: tp.Description,
					InputSchema: anthropic.ToolInputSchemaParam{Properties: s.Properties, Required: s.Required, ExtraFields: s.ExtraFields},
				}
				same(t, tp.Name, want[i], rebuilt)
				schema := map[string]any{"type": "object"}
				for k, v := range s.ExtraFields {
					schema[k] = v
				}
				if s.Properties != nil {
					schema["properties"] = s.Properties
				}
				if s.Required != nil {
					schema["required"] = s.Required
				}
				sameValue(t, tp.Name+" input_schema", schema, exported[i].InputSchema)
			}
		})
	}
}

func TestMCP(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			exported := export.MCP(cfg)
			want := elements(t, exported)
			var tools []mcp.Tool
			decode(t, want, &tools)
			for i, tool := range tools {
				spec := cfg.Tools[tool.Name]
				if spec == nil || tool.Description != spec.Description {
					t.Fatalf("tool %d: name %q description %q do not match the config", i, tool.Name, tool.Description)
				}
				same(t, tool.Name, want[i], tool)
				a := tool.Annotations
				hints := export.Annotations(spec.Effect)
				if a == nil || a.ReadOnlyHint != hints.ReadOnlyHint || a.IdempotentHint != hints.IdempotentHint ||
					a.DestructiveHint == nil || *a.DestructiveHint != *hints.DestructiveHint {
					t.Errorf("%s: annotations %+v, want %+v", tool.Name, a, hints)
				}
				if (spec.OutputSchema != nil) != (tool.OutputSchema != nil) {
					t.Errorf("%s: outputSchema %v, config output_schema %v", tool.Name, tool.OutputSchema, spec.OutputSchema)
				}
			}
		})
	}
}

// elements marshals a list and returns each element's JSON.
func elements[T any](t *testing.T, list []T) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(list))
	for i, v := range list {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// decode decodes the elements as one JSON array into v.
func decode(t *testing.T, elems []json.RawMessage, v any) {
	t.Helper()
	b, err := json.Marshal(elems)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding into %T: %v\n%s", v, err, b)
	}
}

// same fails unless v marshals to the same JSON value as want (numbers
// compared digit for digit, key order ignored).
func same(t *testing.T, name string, want json.RawMessage, v any) {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(generic(t, got), generic(t, want)) {
		t.Errorf("%s: lost in the SDK type:\nexported %s\nrebuilt  %s", name, want, got)
	}
}

// sameValue is same on two Go values.
func sameValue(t *testing.T, name string, got, want any) {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	same(t, name, w, got)
}

func generic(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
