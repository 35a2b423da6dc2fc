package mcpserver_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/mcpserver"
)

// TestEverythingCatalogue: @modelcontextprotocol/server-everything (npm,
// a stdio subprocess of toolgate) has resources, a resource template,
// prompts with arguments and completions; through toolgate a client
// lists and reads them, gets a prompt and completes a template variable.
func TestEverythingCatalogue(t *testing.T) {
	index := npmfixture.Path(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	bin := filepath.Join(filepath.Dir(index), "..", "..", "..", ".bin", "mcp-server-everything")
	gw := gateway(t, "store: memory\ndependencies:\n  every:\n    mcp: {command: ["+strconv.Quote(bin)+"]}\n"+
		"    import: {tools: [echo], resources: [\"demo://*\"], prompts: [\"*\"], prefix: ev_}\n")
	_, url := httpEndpoint(t, gw, mcpserver.Options{})
	cs := catalogueClient(t, url, "", nil)
	ctx := context.Background()

	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources: %+v, %v", res, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil || len(read.Contents) == 0 || read.Contents[0].Text == "" && len(read.Contents[0].Blob) == 0 {
		t.Fatalf("read %s: %+v, %v", res.Resources[0].URI, read, err)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, tt := range tmpl.ResourceTemplates {
		if strings.HasSuffix(tt.URITemplate, "/text/{resourceId}") {
			text = tt.URITemplate
		}
	}
	if text == "" {
		t.Fatalf("no text template among %+v", tmpl.ResourceTemplates)
	}
	uri := strings.Replace(text, "{resourceId}", "3", 1)
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].URI != uri || read.Contents[0].Text == "" {
		t.Fatalf("read %s through the template: %+v, %v", uri, read, err)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ev_args-prompt", Arguments: map[string]string{"city": "Pune", "state": "MH"}})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "What's weather in Pune, MH?" {
		t.Fatalf("prompts/get ev_args-prompt: %+v, %v", got, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: text},
		Argument: mcp.CompleteParamsArgument{Name: "resourceId", Value: "7"}})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "7" {
		t.Fatalf("complete the template's resourceId: %+v, %v", comp, err)
	}
}
