package mcpcall_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

var installOnce sync.Once
var installErr error

// npmServer is the path of a reference MCP server installed from npm into
// the repository's .cache/npm (scripts/install-mcp-servers.sh, run here when
// needed). Without npm the test skips, except under CI=true.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".cache", "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm is missing, so %s cannot be installed; CI must have Node.js (npm)", name)
		}
		t.Skipf("npm is missing: install Node.js (npm) to run the tests against %s", name)
	}
	installOnce.Do(func() {
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "install-mcp-servers.sh"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			installErr = err
			t.Logf("install-mcp-servers.sh: %s", out)
		}
	})
	if installErr != nil {
		t.Fatalf("installing the reference MCP servers: %v", installErr)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed after scripts/install-mcp-servers.sh: %v", name, err)
	}
	return bin
}

// listed lists a server's tools with a client of its own, independent of
// toolgate.
func listed(t *testing.T, command ...string) []*mcp.Tool {
	t.Helper()
	// The capabilities toolgate announces: none (no roots, no sampling).
	client := mcp.NewClient(&mcp.Implementation{Name: "lister", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(command[0], command[1:]...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

// wantEffect is the effect the annotations call for (docs/mcp-upstreams.md).
func wantEffect(a *mcp.ToolAnnotations) types.Effect {
	switch {
	case a != nil && a.ReadOnlyHint:
		return types.EffectRead
	case a != nil && a.IdempotentHint:
		return types.EffectIdempotent
	}
	return types.EffectWrite
}

// stdioServer is a transport that runs command (no in-process fixture).
func stdioServer(command ...string) transport {
	return transport{"stdio", func(testing.TB) (string, *mcptest.Fixture) {
		quoted := make([]string, len(command))
		for i, c := range command {
			quoted[i] = strconv.Quote(c)
		}
		return "{command: [" + strings.Join(quoted, ", ") + "]}", nil
	}}
}

// checkImported: every tool the server lists is imported with the effect
// its annotations call for.
func checkImported(t *testing.T, b *bundle, tools []*mcp.Tool) {
	t.Helper()
	cfg := b.gw.Config()
	for _, tool := range tools {
		got := cfg.Tools[tool.Name]
		if got == nil {
			t.Errorf("%s is not imported", tool.Name)
			continue
		}
		if want := wantEffect(tool.Annotations); got.Effect != want {
			t.Errorf("%s: effect %s, want %s", tool.Name, got.Effect, want)
		}
	}
	if len(cfg.Tools) != len(tools) {
		t.Errorf("%d tools imported, the server lists %d", len(cfg.Tools), len(tools))
	}
}

// The fixture's tools: entries name fixture tools; the reference servers
// get a config of their own.
const referenceConfig = `store: memory
dependencies:
  ref:
    mcp: SERVER
    import: {tools: ["*"]}
`

func referenceSetup(t *testing.T, command ...string) *bundle {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "fixture.yaml")
	if err := os.WriteFile(path, []byte(referenceConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return setupFile(t, stdioServer(command...), path)
}

// TestFilesystemServer: @modelcontextprotocol/server-filesystem over stdio.
func TestFilesystemServer(t *testing.T) {
	bin := npmServer(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := referenceSetup(t, bin, root)
	checkImported(t, b, listed(t, bin, root))
	cfg := b.gw.Config()
	// write_file says idempotentHint and destructiveHint: it is idempotent
	// (docs/mcp-upstreams.md): the same write twice leaves the same file.
	for name, want := range map[string]types.Effect{"write_file": types.EffectIdempotent, "read_file": types.EffectRead, "read_text_file": types.EffectRead, "create_directory": types.EffectIdempotent} {
		if tool := cfg.Tools[name]; tool == nil {
			t.Errorf("%s is not imported", name)
		} else if tool.Effect != want {
			t.Errorf("%s: effect %s, want %s", name, tool.Effect, want)
		}
	}

	file := filepath.Join(root, "note.txt")
	args := `{"path": ` + strconv.Quote(file) + `, "content": "refund RF-99203 issued"}`
	if res := b.call(t, "write_file", args); !res.OK {
		t.Fatalf("write_file: %s", res.Observation)
	}
	if err := os.WriteFile(file, []byte("changed since"), 0o600); err != nil {
		t.Fatal(err)
	}
	again := b.call(t, "write_file", args)
	if !again.OK {
		t.Errorf("repeated write_file: %s", again.Observation)
	}
	if got, _ := os.ReadFile(file); string(got) != "refund RF-99203 issued" {
		t.Errorf("the repeated idempotent write left %q", got)
	}
	if err := os.WriteFile(file, []byte("changed since"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := b.call(t, "read_text_file", `{"path": `+strconv.Quote(file)+`}`)
	if !res.OK || !strings.Contains(string(res.Data), "changed since") {
		t.Errorf("read_text_file: %s %s", res.Data, res.Observation)
	}
	if res := b.call(t, "create_directory", `{"path": `+strconv.Quote(filepath.Join(root, "sub"))+`}`); !res.OK {
		t.Errorf("create_directory: %s", res.Observation)
	}
	if res := b.call(t, "read_text_file", `{"path": "/etc/passwd"}`); res.Code() != types.CodeRejected {
		t.Errorf("a path outside the allowed directory: %s (%s)", res.Code(), res.Observation)
	}
	if res := b.call(t, "write_file", `{"path": "x"}`); res.Code() != types.CodeMissingArguments {
		t.Errorf("write_file without content: %s (%s)", res.Code(), res.Observation)
	}
}

// TestEverythingServer: @modelcontextprotocol/server-everything over stdio.
func TestEverythingServer(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	b := referenceSetup(t, bin)
	checkImported(t, b, listed(t, bin))

	if res := b.call(t, "echo", `{"message": "hello from toolgate"}`); !res.OK || !strings.Contains(string(res.Data), "hello from toolgate") {
		t.Errorf("echo: %s %s", res.Data, res.Observation)
	}
	if res := b.call(t, "get-sum", `{"a": 2, "b": 3}`); !res.OK || !strings.Contains(string(res.Data), "5") {
		t.Errorf("get-sum: %s %s", res.Data, res.Observation)
	}
	if res := b.call(t, "get-structured-content", `{"location": "New York"}`); !res.OK || !strings.HasPrefix(string(res.Data), "{") {
		t.Errorf("get-structured-content: %s %s", res.Data, res.Observation)
	}
	first := b.call(t, "toggle-simulated-logging", `{}`)
	if !first.OK {
		t.Fatalf("toggle-simulated-logging: %s", first.Observation)
	}
	again := b.call(t, "toggle-simulated-logging", `{}`)
	if !again.OK || !again.Meta.Replayed || string(again.Data) != string(first.Data) {
		t.Errorf("repeated write: ok=%v replayed=%v data=%s", again.OK, again.Meta.Replayed, again.Data)
	}
	// Content that is not text is kept as the server sent it and described.
	for _, c := range []struct{ tool, args, block, says string }{
		{"get-tiny-image", `{}`, `"type":"image"`, "1 image, image/png"},
		{"get-resource-links", `{"count": 2}`, `"type":"resource_link"`, "2 resource links"},
		{"get-resource-reference", `{"resourceType": "Text", "resourceId": 1}`, `"type":"resource"`, "1 embedded resource"},
	} {
		res := b.call(t, c.tool, c.args)
		if !res.OK || !strings.Contains(string(res.Content), c.block) || !strings.Contains(res.Observation, c.says) || strings.Contains(res.Observation, "showing") {
			t.Errorf("%s: ok=%v content %.200s observation %s", c.tool, res.OK, res.Content, res.Observation)
		}
	}
	if res := b.call(t, "get-sum", `{"a": "two", "b": 3}`); res.Code() != types.CodeWrongType {
		t.Errorf("get-sum with a string: %s (%s)", res.Code(), res.Observation)
	}
}
