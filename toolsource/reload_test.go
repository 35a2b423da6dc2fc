package toolsource_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

// mcpReloadConfig fronts an MCP server at url, importing every tool, with
// the read timeout of its echo tool overridden.
func mcpReloadConfig(t *testing.T, url, echoRead string) *config.Config {
	t.Helper()
	text := `dependencies:
  fixture:
    mcp: {url: ` + strconv.Quote(url) + `}
    import: {tools: ["*"]}
tools:
  echo:
    timeout: {read: ` + echoRead + `}
`
	cfg, err := config.Parse([]byte(text), "toolgate.yaml", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReloadKeepsImportedTools: a reload of a gateway in front of an MCP
// server merges the new overrides into the tools the server listed (they
// are not lost, nor imported again), and a reload that changes the server
// itself is refused with the old config kept.
func TestReloadKeepsImportedTools(t *testing.T) {
	fx := mcptest.New()
	srv := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { srv.Close(); fx.CloseSessions() })
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: mcpReloadConfig(t, srv.URL, "2s"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	echo := func() *config.Tool {
		t.Helper()
		tool := gw.Config().Tools["echo"]
		if tool == nil {
			t.Fatalf("echo is not a tool: %v", gw.Config().ToolNames())
		}
		return tool
	}
	if got := echo().Timeout.Read.D(); got != 2*time.Second {
		t.Fatalf("echo read timeout %s before the reload, want 2s", got)
	}
	if out, err := gw.Reload(mcpReloadConfig(t, srv.URL, "3s")); err != nil || !out.OK {
		t.Fatalf("reload = %+v, %v", out, err)
	}
	if got := echo().Timeout.Read.D(); got != 3*time.Second {
		t.Fatalf("echo read timeout %s after the reload, want 3s", got)
	}
	if gw.Config().Tools["pay"] == nil || gw.Config().Tools["pay"].Effect != types.EffectWrite {
		t.Fatalf("the imported pay tool is gone or changed after the reload: %+v", gw.Config().Tools["pay"])
	}
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := gw.Call(context.Background(), run.ID, "echo", map[string]any{"text": "hi"}); err != nil || !res.OK {
		t.Fatalf("echo after the reload: %+v, %v", res, err)
	}

	out, err := gw.Reload(mcpReloadConfig(t, srv.URL+"/elsewhere", "4s"))
	if err == nil || out.OK || !strings.Contains(err.Error(), "needs a restart") {
		t.Fatalf("reload changing the MCP server = %+v, %v; want refused, needs a restart", out, err)
	}
	if got := echo().Timeout.Read.D(); got != 3*time.Second {
		t.Fatalf("echo read timeout %s after a refused reload, want 3s kept", got)
	}
}
