package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/mcpserver"
)

// GET /v1/tools?format=mcp (export.MCP) says exactly what the live
// tools/list says: one function makes both.
func TestExportIsTheLiveToolsList(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	gw := gateway(t, configText(t, url))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	live, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	exported := export.MCP(gw.Config())
	if len(exported) == 0 || !sameJSON(t, live.Tools, exported) {
		t.Errorf("the export differs from tools/list:\nexport     %s\ntools/list %s", mustJSON(t, exported), mustJSON(t, live.Tools))
	}
	var hints []struct {
		Annotations struct {
			OpenWorldHint *bool `json:"openWorldHint"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(mustJSON(t, exported), &hints); err != nil {
		t.Fatal(err)
	}
	for i, h := range hints {
		if h.Annotations.OpenWorldHint == nil || !*h.Annotations.OpenWorldHint {
			t.Errorf("%s: the export lacks openWorldHint true", exported[i].Name)
		}
	}
}
