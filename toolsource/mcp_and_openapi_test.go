package toolsource_test

import (
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

// TestOpenAPIBesideAnMCPServer: one gateway imports an OpenAPI document
// and an MCP server; both kinds of tool are called, and when the MCP
// server's list changes, the refreshed tools still hold the document's.
func TestOpenAPIBesideAnMCPServer(t *testing.T) {
	mcpSrv := httptest.NewServer(mcptest.New().Handler())
	defer mcpSrv.Close()
	fake := &petstore{}
	api := httptest.NewServer(fake)
	defer api.Close()
	document, _ := filepath.Abs(filepath.Join("..", "testdata", "openapi", "petstore", "petstore.yaml"))
	cfg := &config.Config{Store: "memory", Dependencies: map[string]*config.Dependency{
		"tools":    {MCP: &config.MCP{URL: mcpSrv.URL}, Import: &config.Import{Tools: []string{"echo", "toggle_extra", "ext*"}}},
		"petstore": {BaseURL: api.URL + "/api", OpenAPI: document, Import: &config.Import{Operations: []string{"listPets"}}},
	}}
	refreshed := make(chan error, 4)
	gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler),
		ToolsRefreshed: func(_ string, err error) { refreshed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, _ := gw.StartRun(t.Context(), toolgate.RunOptions{Principal: types.Principal{ID: "u1"}})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"echo", map[string]any{"text": "hi"}}, {"listPets", map[string]any{"status": "sold"}}, {"toggle_extra", nil}} {
		if res, err := gw.Call(t.Context(), run.ID, c.tool, c.args); err != nil || !res.OK {
			t.Fatalf("%s: %v %s %s", c.tool, err, res.Code(), res.Observation)
		}
	}
	if err := <-refreshed; err != nil {
		t.Fatalf("refresh: %v", err)
	}
	tools := gw.Config().Tools
	if tools["extra"] == nil || tools["listPets"] == nil || tools["listPets"].Source.Kind != config.SourceOpenAPI {
		t.Errorf("after the refresh: %v", gw.Config().ToolNames())
	}
	if res, _ := gw.Call(t.Context(), run.ID, "listPets", map[string]any{"limit": 1}); !res.OK {
		t.Errorf("listPets after the refresh: %s %s", res.Code(), res.Observation)
	}
	if got := fake.seen(); len(got) != 2 || got[1] != "GET /api/pets?limit=1" {
		t.Errorf("the petstore saw %q", got)
	}
}
