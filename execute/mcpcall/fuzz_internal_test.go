package mcpcall

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
)

// FuzzToolsList: whatever a server answers to tools/list, reading it never
// panics, and every tool taken stays inside the bounds (a description of
// at most 1,000 bytes, schemas that pass CheckSchemaBounds).
func FuzzToolsList(f *testing.F) {
	f.Add(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
	f.Add(`{"tools":[{"name":"b","description":"x","inputSchema":{"$defs":{"d":{"allOf":[{"$ref":"#/$defs/d"},{"$ref":"#"}]}},"$ref":"#/$defs/d"}}],"nextCursor":"1"}`)
	f.Add(`{"tools":[{"name":"café","inputSchema":{"$ref":"http://169.254.169.254/"},"annotations":{"readOnlyHint":true}}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var res mcp.ListToolsResult
		if json.Unmarshal([]byte(raw), &res) != nil {
			return
		}
		for _, tool := range res.Tools {
			if tool == nil {
				continue
			}
			it, err := importedTool("fx", tool)
			if err != nil {
				continue
			}
			if len(it.Description) > config.MaxDescriptionBytes || it.Description == "" {
				t.Fatalf("description of %d bytes", len(it.Description))
			}
			for _, s := range []map[string]any{it.InputSchema, it.OutputSchema} {
				if err := config.CheckSchemaBounds(s, 0); err != nil {
					t.Fatalf("a schema past the bounds was taken: %v", err)
				}
			}
		}
	})
}
