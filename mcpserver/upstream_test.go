package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/mcpserver"
)

// TestImportedToolsServed: the tools toolgate imports from an MCP server
// are served by its own MCP endpoint and listed by the exports (what
// /v1/tools answers); a tool the server adds later reaches toolgate's MCP
// clients with notifications/tools/list_changed.
func TestImportedToolsServed(t *testing.T) {
	fx := mcptest.New()
	up := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { fx.CloseSessions(); up.Close() })
	cfg, err := config.Parse([]byte("store: memory\ndependencies:\n  fx:\n    mcp: {url: "+strconv.Quote(up.URL)+"}\n    import: {tools: [echo, pay, toggle_extra, extra]}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), `fx has no tool named "extra"`) {
		t.Fatalf("importing a tool the server does not list: want a problem naming it, got %v", err)
	}
	cfg, err = config.Parse([]byte("store: memory\ndependencies:\n  fx:\n    mcp: {url: "+strconv.Quote(up.URL)+"}\n    import: {tools: [echo, pay, toggle_extra, \"ext*\"]}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	refreshed := make(chan error, 4)
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler),
		ToolsRefreshed: func(_ string, err error) { refreshed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })

	list, err := export.Format(gw.Config(), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.(*export.ToolgateList).Tools {
		names = append(names, tool.Name)
		if tool.Source.Kind != "mcp" || tool.Source.Dependency != "fx" {
			t.Errorf("%s: source %+v", tool.Name, tool.Source)
		}
	}
	if !slices.Equal(names, []string{"echo", "pay", "toggle_extra"}) {
		t.Errorf("exported tools %v", names)
	}

	_, url := httpEndpoint(t, gw, mcpserver.Options{})
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo", "pay", "toggle_extra"}) {
		t.Fatalf("toolgate's MCP endpoint lists %v", got)
	}
	if _, env := mustCall(t, cs, "toggle_extra", map[string]any{}, nil); !env.OK {
		t.Fatalf("toggle_extra: %s", env.Observation)
	}
	select {
	case err := <-refreshed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("toolgate did not refresh the imported tools")
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("toolgate's MCP client got no notifications/tools/list_changed")
	}
	if got := listNames(t, cs); !slices.Contains(got, "extra") {
		t.Errorf("after the refresh toolgate's MCP endpoint lists %v", got)
	}
	if _, env := mustCall(t, cs, "extra", map[string]any{}, nil); !env.OK || string(env.Data) != `{"extra":true}` {
		t.Errorf("extra through toolgate's MCP endpoint: %s", env.Observation)
	}
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}
