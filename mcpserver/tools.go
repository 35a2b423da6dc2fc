package mcpserver

import (
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
		out = append(out, t)
	}
	return out
}

// EnvelopeSchema is the JSON Schema of toolgate's result envelope whose
// data follows the tool's declared output schema: export.EnvelopeSchema.
func EnvelopeSchema(data map[string]any) map[string]any { return export.EnvelopeSchema(data) }

func ptr[T any](v T) *T { return &v }
