package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
)

// mcpImportConfig writes a config importing the mcptest fixture at url,
// with one override and one entry that names nothing.
func mcpImportConfig(t *testing.T, url, extra string) string {
	t.Helper()
	text := "store: memory\ndependencies:\n  fx:\n    mcp: {url: " + strconv.Quote(url) + "}\n    import: {tools: [\"*\"], prefix: \"fx_\"}\n" +
		"  api: {base_url: \"http://127.0.0.1:1\"}\n" +
		"tools:\n  fx_pay:\n    timeout: {read: 5s}\n" + extra
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// declaredRefund is a tools: entry of a declared write, refund, with the
// rule deny, whose owner lookup is an imported tool (fx_echo), and a key
// whose catalogue names imported tools; its dependency api follows.
func declaredRefund(deny string) string {
	return `  refund:
    description: Refund an order.
    effect: write
    dependency: api
    request: {method: POST, path: /refunds}
    input_schema:
      type: object
      properties: {order_id: {type: string}, amount: {type: integer}}
      required: [order_id, amount]
    rules: [{deny: "` + deny + `", message: too much}]
    owner: {lookup: fx_echo, args: {id: args.order_id}, expect: "result.owner == principal.id"}
auth:
  keys: [{name: bot, key: k_1234567890abcdef1234567890, tools: ["fx_echo", "refund", "fx_*"]}]
`
}

func TestCheckReportsImports(t *testing.T) {
	fx := mcptest.New()
	srv := httptest.NewServer(fx.Handler())
	t.Cleanup(func() { fx.CloseSessions(); srv.Close() })
	tests := []struct {
		name  string
		path  string
		args  []string
		code  int
		wants []string
	}{
		{"online", mcpImportConfig(t, srv.URL, ""), nil, 0,
			[]string{"ok (8 tools", "fx: imports 8 of 8 tools:", "fx_echo (read)", "fx_pay (write)", "fx_toggle_extra (idempotent)",
				"dependencies.fx.import: warning: imported write", "with no permission", "fx_pay"}},
		{"an entry naming nothing", mcpImportConfig(t, srv.URL, "  fx_nothing: {effect: read}\n"), nil, 1,
			[]string{"tools.fx_nothing: names no declared tool and no tool imported from fx"}},
		{"offline", mcpImportConfig(t, "http://127.0.0.1:1/mcp", "  fx_nothing: {effect: read}\n"), []string{"--offline"}, 0,
			[]string{"ok offline", "not connected to fx", "2 tools: entries"}},
		// Offline, the declared tools are compiled all the same; a
		// reference to a tool that may be imported cannot be judged.
		{"offline, a declared tool's rule", mcpImportConfig(t, "http://127.0.0.1:1/mcp", declaredRefund("args.amont > 10")), []string{"--offline"}, 1,
			[]string{"tools.refund.rules[0].deny: undefined field 'amont'", "did you mean amount?"}},
		{"offline, references to tools that may be imported", mcpImportConfig(t, "http://127.0.0.1:1/mcp", declaredRefund("args.amount > 10")), []string{"--offline"}, 0,
			[]string{"ok offline (1 declared tools, 2 dependencies"}},
		{"server down", mcpImportConfig(t, "http://127.0.0.1:1/mcp", ""), nil, 1,
			[]string{"fx: connecting", "--offline checks the file alone"}},
	}
	for _, tt := range tests {
		var out, errOut syncBuffer
		code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: os.Getenv}, append([]string{"check", "--config", tt.path}, tt.args...))
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d: %s %s", tt.name, code, tt.code, out.String(), errOut.String())
		}
		for _, want := range tt.wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, want, out.String())
			}
		}
	}

	var out, errOut syncBuffer
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: os.Getenv}, []string{"tools", "--config", mcpImportConfig(t, srv.URL, "")}); code != 0 {
		t.Fatalf("tools: exit %d: %s", code, errOut.String())
	}
	var list struct {
		Tools []struct {
			Name   string `json:"name"`
			Source struct{ Kind, Dependency, Name string }
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out.String()), &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Source.Kind != "mcp" || tool.Source.Dependency != "fx" || "fx_"+tool.Source.Name != tool.Name {
			t.Errorf("%s: source %+v", tool.Name, tool.Source)
		}
	}
	if len(list.Tools) != 8 {
		t.Errorf("toolgate tools lists %d tools, want 8", len(list.Tools))
	}
}
