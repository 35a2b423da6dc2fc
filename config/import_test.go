package config

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// paymentsTools is what the payments MCP server of testdata/mcp lists.
var paymentsTools = []ImportedTool{
	{Name: "create_refund", Description: "Create a refund.", Effect: types.EffectWrite,
		InputSchema: map[string]any{"type": "object", "required": []any{"order_id", "amount_paise"},
			"properties": map[string]any{"order_id": map[string]any{"type": "string"}, "amount_paise": map[string]any{"type": "integer"}}}},
	{Name: "list_refunds", Description: "List refunds.", Effect: types.EffectRead,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}},
	{Name: "get_order", Description: "The server's own order lookup.", Effect: types.EffectRead},
	{Name: "set_note", Description: "Set a note.", Effect: types.EffectIdempotent},
}

func TestImportedName(t *testing.T) {
	tests := []struct{ prefix, name, want string }{
		{"", "get_order", "get_order"},
		{"fs_", "read_file", "fs_read_file"},
		{"", "github.search/issues", "github_search_issues"},
		{"x_", strings.Repeat("a", 80), "x_" + strings.Repeat("a", 62)},
		{"", "café", "caf__850f7dc4"},
		{"", "cafè", "caf__08dcdafd"},
		{"", strings.Repeat("é", 70), strings.Repeat("_", 55) + "_78dcf717"},
	}
	for _, tt := range tests {
		if got := ImportedName(tt.prefix, tt.name); got != tt.want {
			t.Errorf("ImportedName(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
	}
}

var fileTools = []ImportedTool{
	{Name: "read_file", Description: "Read a file.", Effect: types.EffectRead},
	{Name: "read_dir", Description: "List a directory.", Effect: types.EffectRead},
	{Name: "write_file", Description: "Write a file."},
	{Name: "delete_file", Description: "Delete a file."},
}

func loadMCP(t *testing.T) *Config {
	t.Helper()
	cfg, err := load(t, "mcp", map[string]string{"PAYMENTS_TOKEN": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestImportedMergesOverridesAndPrefixes(t *testing.T) {
	base := loadMCP(t)
	if !base.ImportsPending() {
		t.Fatal("a config with imports is pending until Imported")
	}
	if got := strings.Join(base.Overrides(), ","); got != "create_refund,list_refunds" {
		t.Fatalf("held overrides = %s", got)
	}
	cfg, err := base.Imported(map[string][]ImportedTool{"payments_mcp": paymentsTools, "files": fileTools})
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name string) *Tool {
		t.Helper()
		if cfg.Tools[name] == nil {
			t.Fatalf("no tool %s; have %v", name, cfg.ToolNames())
		}
		return cfg.Tools[name]
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"imported description kept", tool("create_refund").Description, "Create a refund."},
		{"override key wins", tool("create_refund").Timeout.Read.D(), 5 * time.Second},
		{"default fills what neither gives", tool("create_refund").Timeout.Connect.D(), DefaultConnectTimeout},
		{"override idempotency key", tool("create_refund").Idempotency.Key, "refund:{order_id}:{amount_paise}:{principal.id}"},
		{"override verify names an imported tool", tool("create_refund").Verify.Lookup, "list_refunds"},
		{"override description wins", tool("list_refunds").Description, "Refunds of an order, as toolgate describes them."},
		{"effect from readOnlyHint", tool("list_refunds").Effect, types.EffectRead},
		{"effect from idempotentHint", tool("set_note").Effect, types.EffectIdempotent},
		{"no hint is a write", tool("fs_write_file").Effect, types.EffectWrite},
		{"declared tool wins outright", tool("get_order").Description, "Look up one order."},
		{"declared tool keeps its dependency", tool("get_order").Dependency, "orders"},
		{"source recorded", *tool("fs_read_file").Source, Source{Kind: SourceMCP, Dependency: "files", Name: "read_file"}},
		{"imported tool's dependency", tool("fs_read_file").Dependency, "files"},
		{"schema numbers as JSON", tool("create_refund").InputSchema["type"], "object"},
		{"pending resolved", cfg.ImportsPending(), false},
		{"base untouched", base.Tools["create_refund"] == nil, true},
		{"version changes with the lists", cfg.Version != base.Version, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if cfg.Tools["fs_delete_file"] != nil {
		t.Error("delete_file is not selected by read_* or write_file")
	}
	if cfg.Tools["fs_read_dir"] == nil {
		t.Error("read_dir is selected by read_*")
	}

	again, err := base.Imported(map[string][]ImportedTool{"payments_mcp": paymentsTools[1:], "files": fileTools})
	if err == nil {
		t.Fatal("create_refund is overridden but no longer listed: want a problem")
	}
	if !strings.Contains(err.Error(), "tools.create_refund: names no declared tool and no tool imported") {
		t.Errorf("problem: %v", err)
	}
	_ = again
}

func TestImportedProblems(t *testing.T) {
	tests := []struct {
		name    string
		lists   map[string][]ImportedTool
		problem string
	}{
		{"named tool missing at the source",
			map[string][]ImportedTool{"payments_mcp": paymentsTools, "files": fileTools[:2]},
			`dependencies.files.import: files has no tool named "write_file"`},
		{"same name from two sources",
			map[string][]ImportedTool{"payments_mcp": append(paymentsTools[:4:4], ImportedTool{Name: "fs_read_file", Description: "x"}), "files": fileTools},
			`tool "fs_read_file" is imported from both`},
		{"override naming nothing",
			map[string][]ImportedTool{"payments_mcp": nil, "files": fileTools},
			"tools.list_refunds: names no declared tool and no tool imported from files, payments_mcp"},
	}
	for _, tt := range tests {
		_, err := loadMCP(t).Imported(tt.lists)
		if err == nil || !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("%s: want %q, got %v", tt.name, tt.problem, err)
		}
	}
}

func TestMCPDependencyProblems(t *testing.T) {
	const tools = "tools:\n  t: {description: A tool., dependency: m}\n"
	tests := []struct {
		name, yaml, problem string
	}{
		{"neither", "dependencies:\n  m: {mcp: {}}\n", "dependencies.m.mcp: needs url"},
		{"both", "dependencies:\n  m: {mcp: {url: \"http://127.0.0.1:1/mcp\", command: [x]}}\n", "give either url"},
		{"bad url", "dependencies:\n  m: {mcp: {url: \"ftp://x\"}}\n", "dependencies.m.mcp.url"},
		{"env on http", "dependencies:\n  m: {mcp: {url: \"http://127.0.0.1:1/mcp\", env: {A: b}}}\n", "dependencies.m.mcp.env"},
		{"import without a source", "dependencies:\n  m: {base_url: \"http://127.0.0.1:1\", import: {tools: [\"*\"]}}\n", "dependencies.m.import: has nothing to import from"},
		{"request on an MCP tool", "dependencies:\n  m: {mcp: {url: \"http://127.0.0.1:1/mcp\"}}", "tools.t.request: an MCP tool"},
	}
	for _, tt := range tests {
		y := tools
		if strings.Contains(tt.name, "request") {
			y = "tools:\n  t: {description: A tool., dependency: m, request: {path: /u}}\n"
		}
		_, err := Parse([]byte(y+tt.yaml), "x.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("%s: want %q, got %v", tt.name, tt.problem, err)
		}
	}
	cfg, err := Parse([]byte(tools+"dependencies:\n  m: {mcp: {command: [./srv, --stdio]}}\n"), "/etc/tg/x.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Dependencies["m"].MCP.Command[0]; got != "/etc/tg/srv" {
		t.Errorf("relative command = %s, want /etc/tg/srv", got)
	}
	if cfg.ImportsPending() {
		t.Error("no import: nothing pending")
	}
}

func TestImportSelectsAcrossSlashes(t *testing.T) {
	tests := []struct {
		patterns []string
		name     string
		want     bool
	}{
		{nil, "repos/get", true},
		{[]string{"*"}, "repos/get", true},
		{[]string{"repos/*"}, "repos/get", true},
		{[]string{"repos/*"}, "issues/get", false},
		{[]string{"*/get"}, "repos/get", true},
		{[]string{"repos/get"}, "repos/get", true},
		{[]string{"repos_get"}, "repos/get", false},
		{[]string{"get_*"}, "get_order", true},
	}
	for _, tt := range tests {
		im := &Import{Operations: tt.patterns}
		if got := im.Selects(SourceOpenAPI, tt.name); got != tt.want {
			t.Errorf("%v selects %s = %v, want %v", tt.patterns, tt.name, got, tt.want)
		}
	}
}
