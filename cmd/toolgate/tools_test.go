package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
)

// keysYAML adds two keys to cliYAML: support-bot pins a principal without
// refunds:write, reader has a list.
const keysYAML = `auth:
  keys:
    - name: support-bot
      key: support-key-0123456789
      principal: {id: cust_42}
    - name: reader
      key: reader-key-0123456789
      tools: ["get_*"]
`

func TestToolsForAKey(t *testing.T) {
	cfg, _ := cliSetup(t)
	raw, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append([]byte(keysYAML), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want []string // tool names, or the error's words
	}{
		{[]string{"--key", "support-bot"}, 0, []string{"get_order"}},
		{[]string{"--key", "reader", "--format", "openai"}, 0, []string{"get_order"}},
		{nil, 0, []string{"get_order", "issue_refund"}},
		{[]string{"--key", "nobody"}, 2, []string{`no auth.keys entry is named "nobody" (have: support-bot, reader)`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"tools", "--config", cfg}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			if code != 0 {
				if !strings.Contains(errOut, tt.want[0]) {
					t.Errorf("stderr %q, want %q", errOut, tt.want[0])
				}
				return
			}
			var names []string
			var list any
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"get_order", "issue_refund"} {
				if strings.Contains(out, `"`+n+`"`) {
					names = append(names, n)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("listed %v, want %v\n%s", names, tt.want, out)
			}
		})
	}
}

func TestCheckNamesAnUnmatchedToolsEntry(t *testing.T) {
	cfg, _ := cliSetup(t)
	raw, _ := os.ReadFile(cfg)
	bad := strings.Replace(keysYAML, `["get_*"]`, `["get_*", "crm_*"]`, 1)
	path := filepath.Join(filepath.Dir(cfg), "bad.yaml")
	if err := os.WriteFile(path, append([]byte(bad), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "check", "--config", path)
	if code != 1 || !strings.Contains(out, `auth.keys[1].tools[1]: "crm_*" (key reader) matches no tool`) {
		t.Errorf("check: exit %d\n%s", code, out)
	}
}

// A recorded call of a tool that a new config takes out of its key's list
// is re-judged unknown_tool by what-if.
func TestWhatifHonoursTheKeysList(t *testing.T) {
	cfgPath, _ := cliSetup(t)
	raw, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append([]byte(keysYAML), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	newPath := filepath.Join(filepath.Dir(cfgPath), "toolgate.new.yaml")
	narrowed := strings.Replace(keysYAML, `["get_*"]`, `["issue_*"]`, 1)
	if err := os.WriteFile(newPath, append([]byte(narrowed), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: cfgPath, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "cust_42"}, Owner: "reader"})
	if res, _ := gw.Call(ctx, run.ID, "get_order", map[string]any{"order_id": "ORD-4471"}); !res.OK {
		t.Fatalf("get_order: %s", res.Observation)
	}
	gw.Close()

	code, out, errOut := runCLI(t, "whatif", "--config", newPath, "--run", "r1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Changes []struct {
			Tool string `json:"tool"`
			Now  struct {
				Allowed bool
				Code    string
				Message string
			}
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].Now.Code != "unknown_tool" || !strings.Contains(rep.Changes[0].Now.Message, "Available tools: issue_refund.") {
		t.Errorf("what-if under the narrowed list: %s", out)
	}
}
