package export

import (
	"encoding/json"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// MCPTool is one tool of an MCP tools/list answer.
type MCPTool struct {
	Name string `json:"name"`
	// Title, Icons and Meta are an imported MCP tool's own, as its server
	// listed them; empty for other tools.
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	Annotations  MCPAnnotations `json:"annotations"`
	Icons        []MCPIcon      `json:"icons,omitempty"`
	Meta         map[string]any `json:"_meta,omitempty"`
}

// MCPIcon is an icon of an imported MCP tool, as its server listed it.
type MCPIcon struct {
	Source   string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// MCPAnnotations are the behaviour hints of an MCP tool, derived from the
// tool's effect: a read is read-only, idempotent and not destructive; an
// idempotent tool is idempotent but may overwrite (destructive); a write is
// neither read-only nor idempotent, and destructive. An imported MCP tool
// whose server gave annotations keeps them as given (a nil DestructiveHint
// or OpenWorldHint is one the server left out), unless the config sets its
// effect (docs/mcp-upstreams.md, "What reaches the MCP client").
type MCPAnnotations struct {
	// Title is an imported tool's annotations title, as its server gave it.
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
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
// function; an imported MCP tool keeps its server's title, icons,
// annotations and _meta (relist).
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
		if t.Source != nil {
			relist(&m, t.Source)
		}
		out = append(out, m)
	}
	return out
}

// listing is what an imported MCP tool's server listed beside its name,
// description and schemas (config.Source.Listing).
type listing struct {
	Title       string          `json:"title"`
	Icons       []MCPIcon       `json:"icons"`
	Meta        map[string]any  `json:"_meta"`
	Annotations *MCPAnnotations `json:"annotations"`
}

// relist gives an imported MCP tool the fields its server listed: title,
// icons and _meta unchanged, and annotations as given unless the config
// sets the effect, which the hints then show (the server's annotations
// title is kept). A server that gave no annotations gets the hints derived
// from the effect, as a configured tool does.
func relist(m *MCPTool, src *config.Source) {
	if src.Listing == "" {
		return
	}
	var l listing
	if err := json.Unmarshal([]byte(src.Listing), &l); err != nil {
		return // made by mcpcall from a decoded tool: cannot happen
	}
	m.Title, m.Icons, m.Meta = l.Title, l.Icons, l.Meta
	switch {
	case l.Annotations == nil:
	case src.EffectSet:
		m.Annotations.Title = l.Annotations.Title
	default:
		m.Annotations = *l.Annotations
	}
}

// Annotations derives the MCP hints from an effect.
func Annotations(e types.Effect) MCPAnnotations {
	yes, no := true, false
	switch e {
	case types.EffectRead:
		return MCPAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no}
	case types.EffectIdempotent:
		return MCPAnnotations{IdempotentHint: true, DestructiveHint: &yes}
	}
	return MCPAnnotations{DestructiveHint: &yes}
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
