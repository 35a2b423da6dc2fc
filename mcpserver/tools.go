package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

// Tools returns the MCP definitions of cfg's tools, sorted by name: the
// export package's MCP list (name, description, inputSchema, annotations
// from the effect, openWorldHint true for HTTP tools) and, for a tool
// that declares output_schema, an outputSchema of the envelope that
// structuredContent carries (see EnvelopeSchema).
func Tools(cfg *config.Config) []*mcp.Tool {
	var out []*mcp.Tool
	for _, e := range export.MCP(cfg) {
		t := &mcp.Tool{
			Name:        e.Name,
			Description: e.Description,
			InputSchema: e.InputSchema,
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    e.Annotations.ReadOnlyHint,
				IdempotentHint:  e.Annotations.IdempotentHint,
				DestructiveHint: ptr(e.Annotations.DestructiveHint),
				OpenWorldHint:   e.Annotations.OpenWorldHint,
			},
		}
		if e.OutputSchema != nil {
			t.OutputSchema = e.OutputSchema
		}
		if ct := cfg.Tools[e.Name]; ct != nil && ct.Source != nil {
			relist(t, ct.Source)
		}
		out = append(out, t)
	}
	return out
}

// EnvelopeSchema is the JSON Schema of toolgate's result envelope whose
// data follows the tool's declared output schema: export.EnvelopeSchema.
func EnvelopeSchema(data map[string]any) map[string]any { return export.EnvelopeSchema(data) }

// relist gives an imported MCP tool the fields its server listed (docs/mcp-upstreams.md,
// "What reaches the MCP client"): title, icons and _meta unchanged, and annotations as
// given unless the config sets the effect, which the hints then show (the
// server's annotations title is kept). A server that gave no annotations
// gets the hints derived from the effect, as a configured tool does.
func relist(t *mcp.Tool, src *config.Source) {
	if src.Listing == "" {
		return
	}
	var l mcp.Tool
	if err := json.Unmarshal([]byte(src.Listing), &l); err != nil {
		return // made by mcpcall from a decoded tool: cannot happen
	}
	t.Title, t.Icons, t.Meta = l.Title, l.Icons, l.Meta
	switch {
	case l.Annotations == nil:
	case src.EffectSet:
		t.Annotations.Title = l.Annotations.Title
	default:
		t.Annotations = l.Annotations
	}
}

func ptr[T any](v T) *T { return &v }
