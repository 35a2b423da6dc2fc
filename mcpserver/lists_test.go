package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/mcpserver"
)

// listsUpstream is a Go SDK MCP server whose tools carry every listing
// field the SDK can encode: title, icons, annotations (openWorldHint
// false, destructiveHint false) and _meta.
func listsUpstream(t *testing.T) (string, map[string]*mcp.Tool) {
	t.Helper()
	no := false
	icons := []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}}
	tools := map[string]*mcp.Tool{
		"lookup": {Name: "lookup", Title: "Look up", Description: "Look a thing up.", Icons: icons,
			Annotations: &mcp.ToolAnnotations{Title: "Lookup", ReadOnlyHint: true, OpenWorldHint: &no},
			Meta:        mcp.Meta{"vendor.example/tier": "gold", "vendor.example/limits": map[string]any{"per_min": 60, "burst": false}}},
		"erase": {Name: "erase", Title: "Erase", Description: "Erase a thing.",
			Annotations: &mcp.ToolAnnotations{Title: "Eraser", IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no},
			Meta:        mcp.Meta{"vendor.example/tier": "free"}},
		"bare": {Name: "bare", Description: "No extras."},
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
	for _, tool := range tools {
		tool.InputSchema = map[string]any{"type": "object"}
		srv.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	return up.URL, tools
}

// TestImportedListingKept: a Go SDK client of toolgate, and the MCP
// export (GET /v1/tools?format=mcp), see an imported tool's title, icons,
// annotations and _meta exactly as the upstream listed them (docs/mcp-upstreams.md, "What reaches the MCP client"), except that an effect the
// config sets (erase: effect write) is shown through the hints. The SDK
// (v1.8.0) has no execution field, so execution is not tested.
func TestImportedListingKept(t *testing.T) {
	url, up := listsUpstream(t)
	gw := gateway(t, "store: memory\ndependencies:\n  up:\n    mcp: {url: "+strconv.Quote(url)+"}\n    import: {tools: [\"*\"]}\n"+
		"tools:\n  erase: {effect: write}\n")
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: endpoint})
	got := map[string]*mcp.Tool{}
	var live []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Name] = tool
		live = append(live, tool)
	}
	// GET /v1/tools?format=mcp says the same, field for field.
	if exported := export.MCP(gw.Config()); !sameJSON(t, live, exported) {
		t.Errorf("the export differs from tools/list:\nexport     %s\ntools/list %s", mustJSON(t, exported), mustJSON(t, live))
	}
	yes := true
	for _, tc := range []struct {
		name        string
		annotations *mcp.ToolAnnotations // nil: as the upstream gave them
	}{
		{name: "lookup"},
		// The config's effect: write shows through the hints; the
		// annotations' title stays the server's.
		{name: "erase", annotations: &mcp.ToolAnnotations{Title: "Eraser", DestructiveHint: &yes, OpenWorldHint: &yes}},
		// No annotations upstream: the hints derived from the effect.
		{name: "bare", annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, w := got[tc.name], up[tc.name]
			if g == nil {
				t.Fatalf("toolgate does not list %s: %v", tc.name, got)
			}
			wantAnn := w.Annotations
			if tc.annotations != nil {
				wantAnn = tc.annotations
			}
			check := func(field string, g, w any) {
				gb, _ := json.Marshal(g)
				wb, _ := json.Marshal(w)
				if string(gb) != string(wb) {
					t.Errorf("%s: %s through toolgate, %s upstream", field, gb, wb)
				}
			}
			check("title", g.Title, w.Title)
			check("icons", g.Icons, w.Icons)
			check("_meta", g.Meta, w.Meta)
			check("annotations", g.Annotations, wantAnn)
		})
	}
}
