package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamContent turns the content blocks an MCP upstream sent (a JSON
// array, kept as sent in the envelope's content) back into the SDK's
// blocks, every field kept: text, image, audio, resource_link and
// resource, with their annotations and _meta. A block the SDK cannot
// carry becomes a text block that says so, rather than vanishing.
func upstreamContent(raw json.RawMessage) []mcp.Content {
	if len(raw) == 0 {
		return nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	out := make([]mcp.Content, 0, len(blocks))
	for _, b := range blocks {
		var one mcp.CallToolResult
		wire := append(append([]byte(`{"content":[`), b...), "]}"...)
		if err := json.Unmarshal(wire, &one); err != nil || len(one.Content) != 1 {
			var t struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(b, &t)
			out = append(out, &mcp.TextContent{Text: fmt.Sprintf("(The tool's answer held a %q content block that toolgate cannot relay over MCP; the HTTP API's envelope carries it in content.)", t.Type)})
			continue
		}
		out = append(out, one.Content[0])
	}
	return out
}
