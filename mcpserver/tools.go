package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

// Tools returns the MCP definitions of cfg's tools, sorted by name: the
// export package's MCP list (name, description, inputSchema, annotations
// from the effect), with openWorldHint true for HTTP tools and, for a tool
// that declares output_schema, an outputSchema of the envelope that
// structuredContent carries (see EnvelopeSchema).
func Tools(cfg *config.Config) []*mcp.Tool {
	var out []*mcp.Tool
	for _, e := range export.MCP(cfg) {
		t := &mcp.Tool{
			Name:        e.Name,
			Description: e.Description,
			InputSchema: objectSchema(e.InputSchema),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    e.Annotations.ReadOnlyHint,
				IdempotentHint:  e.Annotations.IdempotentHint,
				DestructiveHint: ptr(e.Annotations.DestructiveHint),
			},
		}
		if spec := cfg.Tools[e.Name]; spec != nil {
			if spec.Func == nil {
				t.Annotations.OpenWorldHint = ptr(true)
			}
			if spec.OutputSchema != nil {
				t.OutputSchema = EnvelopeSchema(spec.OutputSchema)
			}
		}
		out = append(out, t)
	}
	return out
}

// EnvelopeSchema is the JSON Schema of toolgate's result envelope whose
// data follows the tool's declared output schema (null on a failure). MCP
// requires structuredContent to conform to a tool's outputSchema, and
// toolgate's structuredContent is the envelope, not the bare data.
func EnvelopeSchema(data map[string]any) map[string]any {
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

func ptr[T any](v T) *T { return &v }
