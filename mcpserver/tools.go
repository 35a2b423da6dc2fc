package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

// Tools returns the MCP definitions of cfg's tools, sorted by name: the
// export package's MCP list, field for field (name, title, description,
// inputSchema, annotations, icons, _meta and, for a tool that declares
// output_schema, an outputSchema of the envelope that structuredContent
// carries, see EnvelopeSchema), so that GET /v1/tools?format=mcp and the
// live tools/list agree.
func Tools(cfg *config.Config) []*mcp.Tool {
	var out []*mcp.Tool
	for _, e := range export.MCP(cfg) {
		a := e.Annotations
		t := &mcp.Tool{
			Name:        e.Name,
			Title:       e.Title,
			Description: e.Description,
			InputSchema: e.InputSchema,
			Annotations: &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, IdempotentHint: a.IdempotentHint,
				DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint},
			Meta: e.Meta,
		}
		for _, i := range e.Icons {
			t.Icons = append(t.Icons, mcp.Icon{Source: i.Source, MIMEType: i.MIMEType, Sizes: i.Sizes, Theme: mcp.IconTheme(i.Theme)})
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
