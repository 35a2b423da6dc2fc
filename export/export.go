// Package export turns toolgate's configured tools into the tool lists of
// the model ecosystems: OpenAI chat-completions function tools, OpenAI
// Responses API function tools, Anthropic tools, and MCP tools. It is pure: a config in, plain values out, so the
// server's GET /v1/tools, `toolgate tools` and the MCP server all say the
// same thing.
//
// Every list is sorted by tool name. Schemas are deep copies: a caller may
// change them without touching the config.
package export

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// The format names Format accepts.
const (
	// FormatToolgate is toolgate's own shape (the default: no format given).
	FormatToolgate = ""
	// FormatOpenAI is the OpenAI chat-completions "tools" array.
	FormatOpenAI = "openai"
	// FormatOpenAIResponses is the OpenAI Responses API "tools" array.
	FormatOpenAIResponses = "openai-responses"
	// FormatAnthropic is the Anthropic Messages API "tools" array.
	FormatAnthropic = "anthropic"
	// FormatMCP is the MCP tools/list "tools" array.
	FormatMCP = "mcp"
)

// Formats lists the named formats, for messages and flag help.
var Formats = []string{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatMCP}

// Format returns the tool list of cfg in the named format: a
// *ToolgateList for "" (toolgate's own shape), else the ecosystem's array.
// An unknown name is an error that lists the valid ones.
func Format(cfg *config.Config, name string) (any, error) {
	switch strings.ToLower(name) {
	case FormatToolgate:
		return &ToolgateList{Tools: Toolgate(cfg)}, nil
	case FormatOpenAI:
		return OpenAI(cfg), nil
	case FormatOpenAIResponses:
		return OpenAIResponses(cfg), nil
	case FormatAnthropic:
		return Anthropic(cfg), nil
	case FormatMCP:
		return MCP(cfg), nil
	}
	return nil, fmt.Errorf("unknown format %q: use %s, or none for toolgate's own", name, strings.Join(Formats, ", "))
}

// ToolgateList is toolgate's own tool list: {"tools": [...]}.
type ToolgateList struct {
	Tools []ToolgateTool `json:"tools"`
}

// ToolgateTool is one tool in toolgate's own shape: what the model sees
// plus the policy facts an agent host may want (effect, permission).
type ToolgateTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Effect      types.Effect   `json:"effect"`
	Permission  string         `json:"permission,omitempty"`
	Dependency  string         `json:"dependency,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
	// OutputSchema is the configured output schema, when there is one.
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	// VerifyWith names the read tool that settles an unknown outcome.
	VerifyWith string `json:"verify_with,omitempty"`
	// Source says where the tool comes from: {"kind": "config"} for a tool
	// declared in toolgate.yaml, {"kind": "go"} for a Go function, or the
	// MCP server (or OpenAPI document) it was imported from, with its name
	// there.
	Source config.Source `json:"source"`
}

// source is where a tool comes from, for ToolgateTool.Source.
func source(t *config.Tool) config.Source {
	switch {
	case t.Source != nil:
		return *t.Source
	case t.Func != nil:
		return config.Source{Kind: "go"}
	}
	return config.Source{Kind: "config"}
}

// Toolgate returns every tool in toolgate's own shape.
func Toolgate(cfg *config.Config) []ToolgateTool {
	out := []ToolgateTool{}
	for _, t := range tools(cfg) {
		tt := ToolgateTool{
			Name: t.Name, Description: t.Description, Effect: effect(t), Permission: t.Permission,
			Dependency: t.Dependency, InputSchema: inputSchema(t), OutputSchema: normalized(t.OutputSchema),
			Source: source(t),
		}
		if t.Verify != nil {
			tt.VerifyWith = t.Verify.Lookup
		}
		out = append(out, tt)
	}
	return out
}

// OpenAITool is one OpenAI chat-completions function tool:
// {"type": "function", "function": {...}}.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of an OpenAITool.
type OpenAIFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	// Strict is set (true) only when the schema meets OpenAI's strict mode:
	// every object closed (additionalProperties false) with every property
	// required, and only keywords strict mode supports.
	Strict *bool `json:"strict,omitempty"`
}

// OpenAI returns every tool as an OpenAI function tool.
func OpenAI(cfg *config.Config) []OpenAITool {
	out := []OpenAITool{}
	for _, t := range tools(cfg) {
		schema := modelSchema(inputSchema(t))
		f := OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: schema}
		if strictCompatible(schema) {
			yes := true
			f.Strict = &yes
		}
		out = append(out, OpenAITool{Type: "function", Function: f})
	}
	return out
}

// OpenAIResponsesTool is one function tool of the OpenAI Responses API:
// flat, {"type": "function", "name", "description", "parameters",
// "strict"}, where the Responses API requires strict.
type OpenAIResponsesTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	// Strict is true only when the schema meets OpenAI's strict mode (as
	// for OpenAIFunction); false otherwise, since the Responses API
	// defaults to strict when it is absent.
	Strict bool `json:"strict"`
}

// OpenAIResponses returns every tool as an OpenAI Responses API function
// tool.
func OpenAIResponses(cfg *config.Config) []OpenAIResponsesTool {
	out := []OpenAIResponsesTool{}
	for _, t := range tools(cfg) {
		schema := modelSchema(inputSchema(t))
		out = append(out, OpenAIResponsesTool{Type: "function", Name: t.Name, Description: t.Description,
			Parameters: schema, Strict: strictCompatible(schema)})
	}
	return out
}

// AnthropicTool is one tool of the Anthropic Messages API.
type AnthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// Anthropic returns every tool in the Anthropic Messages API's shape.
func Anthropic(cfg *config.Config) []AnthropicTool {
	out := []AnthropicTool{}
	for _, t := range tools(cfg) {
		out = append(out, AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: modelSchema(inputSchema(t))})
	}
	return out
}

// tools returns cfg's tools sorted by name, skipping empty entries.
func tools(cfg *config.Config) []*config.Tool {
	if cfg == nil {
		return nil
	}
	var out []*config.Tool
	for _, name := range cfg.ToolNames() {
		if t := cfg.Tools[name]; t != nil {
			if t.Name == "" {
				c := *t
				c.Name = name
				t = &c
			}
			out = append(out, t)
		}
	}
	return out
}

// effect is the tool's effect, write when it is not declared.
func effect(t *config.Tool) types.Effect {
	if t.Effect == "" {
		return types.EffectWrite
	}
	return t.Effect
}

// inputSchema is a copy of the tool's input schema; a tool without one
// takes no arguments.
func inputSchema(t *config.Tool) map[string]any {
	if t.InputSchema == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	}
	return normalized(t.InputSchema)
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = clone(v)
	}
	return out
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMap(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e)
		}
		return out
	case []string:
		return append([]string(nil), v...)
	case json.RawMessage:
		return append(json.RawMessage(nil), v...)
	}
	return v
}
