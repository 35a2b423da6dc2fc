package mcpcall

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// Effect is the effect an MCP tool's annotations suggest (docs/mcp-upstreams.md,
// "Effects from the annotations"): readOnlyHint is read; idempotentHint (not
// read-only) is idempotent whatever destructiveHint says, as HTTP's PUT
// and DELETE are: writing the same file twice leaves the same end state;
// anything else, or no annotations, is write, the safe assumption. The
// hints come from a server that may be wrong, so a tools: entry's effect
// (say effect: write for a server you distrust) always wins over this.
func Effect(a *mcp.ToolAnnotations) types.Effect {
	switch {
	case a == nil:
		return types.EffectWrite
	case a.ReadOnlyHint:
		return types.EffectRead
	case a.IdempotentHint:
		return types.EffectIdempotent
	}
	return types.EffectWrite
}

// importedTool is an MCP tool as config.Imported takes it: schemas as
// JSON-decoded maps with exact numbers, and a description even when the
// server gives none (the model needs one to choose the tool).
func importedTool(dep string, t *mcp.Tool) (config.ImportedTool, error) {
	it := config.ImportedTool{Name: t.Name, Description: config.CutDescription(t.Description), Effect: Effect(t.Annotations)}
	if it.Description == "" {
		it.Description = t.Title
		if it.Description == "" && t.Annotations != nil {
			it.Description = t.Annotations.Title
		}
		if it.Description == "" {
			it.Description = fmt.Sprintf("The %s tool of the %s MCP server.", t.Name, dep)
		}
		it.Description = config.CutDescription(it.Description)
	}
	var err error
	if it.InputSchema, err = schemaMap(t.InputSchema); err != nil {
		return it, fmt.Errorf("%s: tool %s: inputSchema: %w", dep, t.Name, err)
	}
	if it.OutputSchema, err = schemaMap(t.OutputSchema); err != nil {
		return it, fmt.Errorf("%s: tool %s: outputSchema: %w", dep, t.Name, err)
	}
	if it.Listing, err = listing(t); err != nil {
		return it, fmt.Errorf("%s: tool %s: %w", dep, t.Name, err)
	}
	return it, nil
}

// listing is the JSON of the listing fields toolgate re-serves unchanged
// (docs/mcp-upstreams.md, "What reaches the MCP client"): title, icons, annotations and _meta, as
// the SDK decoded them; nil when the server gave none of them. The SDK's
// Tool (go-sdk v1.8.0) has no execution field, so execution (taskSupport)
// is neither decoded here nor encodable by toolgate's own SDK server.
func listing(t *mcp.Tool) (json.RawMessage, error) {
	if t.Title == "" && len(t.Icons) == 0 && t.Annotations == nil && len(t.Meta) == 0 {
		return nil, nil
	}
	return json.Marshal(struct {
		Title       string               `json:"title,omitempty"`
		Icons       []mcp.Icon           `json:"icons,omitempty"`
		Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
		Meta        mcp.Meta             `json:"_meta,omitempty"`
	}{t.Title, t.Icons, t.Annotations, t.Meta})
}

// schemaMap re-decodes a schema the SDK decoded into a map with json.Number
// numbers; nil stays nil. A schema past config's bounds (size, $ref
// expansion, depth) is refused before anything walks it.
func schemaMap(v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) > config.MaxSchemaBytes {
		return nil, config.CheckSchemaBounds(nil, len(b))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if err := config.CheckSchemaBounds(m, len(b)); err != nil {
		return nil, err
	}
	return m, nil
}
