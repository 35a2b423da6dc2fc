package export

import (
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// MCPTool is one tool of an MCP tools/list answer.
type MCPTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	Annotations  MCPAnnotations `json:"annotations"`
}

// MCPAnnotations are the behaviour hints of an MCP tool, derived from the
// tool's effect: a read is read-only, idempotent and not destructive; an
// idempotent tool is idempotent but may overwrite (destructive); a write is
// neither read-only nor idempotent, and destructive.
type MCPAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	DestructiveHint bool `json:"destructiveHint"`
	// OpenWorldHint is true for tools that reach a dependency (HTTP and
	// imported tools); absent for Go-function tools.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// MCP returns every tool in MCP's shape, exactly as the live MCP
// tools/list gives it (package mcpserver builds its list from this one):
// inputSchema always has "type": "object" (MCP requires it); outputSchema,
// for a tool that configures output_schema, is the schema of the envelope
// that structuredContent carries (EnvelopeSchema), since that is what a
// call answers; openWorldHint is true for every tool that is not a Go
// function.
func MCP(cfg *config.Config) []MCPTool {
	out := []MCPTool{}
	for _, t := range tools(cfg) {
		m := MCPTool{Name: t.Name, Description: t.Description, InputSchema: objectSchema(inputSchema(t)), Annotations: Annotations(effect(t))}
		if t.Func == nil {
			open := true
			m.Annotations.OpenWorldHint = &open
		}
		if t.OutputSchema != nil {
			m.OutputSchema = EnvelopeSchema(normalized(t.OutputSchema))
		}
		out = append(out, m)
	}
	return out
}

// Annotations derives the MCP hints from an effect.
func Annotations(e types.Effect) MCPAnnotations {
	switch e {
	case types.EffectRead:
		return MCPAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	case types.EffectIdempotent:
		return MCPAnnotations{IdempotentHint: true, DestructiveHint: true}
	}
	return MCPAnnotations{DestructiveHint: true}
}

// EnvelopeSchema is the JSON Schema of toolgate's result envelope whose
// data follows the tool's declared output schema (null on a failure). MCP
// requires structuredContent to conform to a tool's outputSchema, and
// toolgate's structuredContent is the envelope, not the bare data.
func EnvelopeSchema(data map[string]any) map[string]any {
	if _, ok := data["$schema"]; ok {
		// data is nested below the envelope's root: no $schema there.
		data = cloneMap(data)
		delete(data, "$schema")
	}
	return map[string]any{
		"type":     "object",
		"required": []any{"ok", "data", "error", "meta", "observation"},
		"properties": map[string]any{
			"ok":   map[string]any{"type": "boolean"},
			"data": map[string]any{"anyOf": []any{data, map[string]any{"type": "null"}}},
			"error": map[string]any{
				"anyOf": []any{
					map[string]any{"type": "null"},
					map[string]any{
						"type":     "object",
						"required": []any{"code", "message", "retryable"},
						"properties": map[string]any{
							"code":      map[string]any{"type": "string"},
							"message":   map[string]any{"type": "string"},
							"retryable": map[string]any{"type": "boolean"},
						},
					},
				},
			},
			"meta": map[string]any{
				"type":     "object",
				"required": []any{"run_id", "step", "tool", "call_id", "side_effect", "next"},
				"properties": map[string]any{
					"run_id":      map[string]any{"type": "string"},
					"step":        map[string]any{"type": "integer"},
					"tool":        map[string]any{"type": "string"},
					"call_id":     map[string]any{"type": "string"},
					"replayed":    map[string]any{"type": "boolean"},
					"verified":    map[string]any{"type": "boolean"},
					"side_effect": map[string]any{"enum": []any{"none", "committed", "unknown"}},
					"next": map[string]any{"enum": []any{"continue", "fix_args", "retry", "wait", "verify",
						"use_other_tool", "escalate", "stop"}},
				},
			},
			"observation": map[string]any{"type": "string"},
		},
	}
}

// objectSchema returns schema with "type": "object", which MCP requires of
// an inputSchema. toolgate accepts schemas without a type (or with a list
// of types holding object), since arguments are always an object anyway.
func objectSchema(schema map[string]any) map[string]any {
	if schema["type"] == "object" {
		return schema
	}
	out := make(map[string]any, len(schema)+1)
	for k, v := range schema {
		out[k] = v
	}
	out["type"] = "object"
	return out
}
