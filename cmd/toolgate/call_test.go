package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/types"
)

// cliOptions make the refunds fixture the command tests' config: a SQLite
// store, get_order and issue_refund with its permission, key and state.
var cliOptions = []refunds.Option{
	refunds.Set("store", "sqlite:toolgate.db"),
	refunds.Delete("tools.list_refunds", "tools.issue_refund.input_schema.properties.reason", "tools.issue_refund.rules",
		"tools.issue_refund.owner", "tools.issue_refund.verify", "tools.issue_refund.state.refund_id"),
	refunds.Set("tools.get_order.retry", "{max_attempts: 1}"),
}

// cliYAML is the command tests' config; PROVIDER is replaced by the
// simulated provider's URL.
var cliYAML = refunds.Config("PROVIDER", cliOptions...)

// cliSetup starts the simulated provider and writes the config; it returns
// the config's path.
func cliSetup(t *testing.T) (string, *sim.Payments) {
	t.Helper()
	p := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
	p.HonourKeys = true
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(cliYAML, "PROVIDER", srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, p
}

// runCLI runs the command line in process and returns its exit code and
// output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: os.Getenv}, args)
	return code, out.String(), errOut.String()
}

func TestCallRunsReplay(t *testing.T) {
	cfg, provider := cliSetup(t)
	principal := `{"id":"cust_42","permissions":["refunds:write"]}`
	code, out, errOut := runCLI(t, "call", "--config", cfg, "--principal", principal, "--run-id", "r1",
		"--state", `{"refunded_paise":0}`, "--tool", "issue_refund", "--args", `{"order_id":"ORD-4471","amount_paise":9007199254740993}`)
	if code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out, errOut)
	}
	var res types.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.OK || res.Meta.RunID != "r1" {
		t.Fatalf("call printed %s (%v)", out, err)
	}
	if got := provider.Refunds(); len(got) != 1 || got[0].AmountPaise != 9007199254740993 {
		t.Fatalf("provider refunds: %+v", got)
	}

	// A tool failure prints its envelope and exits 1.
	code, out, errOut = runCLI(t, "call", "--config", cfg, "--run", "r1", "--tool", "get_order", "--args", `{"order_id":"ORD-1"}`)
	if code != 1 || !strings.Contains(out, `"code": "rejected"`) || !strings.Contains(errOut, "get_order ended with rejected") {
		t.Fatalf("failed call: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = runCLI(t, "runs", "show", "r1", "--config", cfg)
	for _, want := range []string{"Run r1 for cust_42 (permissions: refunds:write)", "Step 2;", `State: {"refunded_paise":9007199254740993}`,
		"#1  ", "issue_refund  ok  (done, 1 attempt", "#2  ", "get_order  rejected  (nothing changed", "    args   {\"order_id\":\"ORD-1\"}\n    told   get_order failed (rejected)",
		`state  {"refunded_paise":9007199254740993}`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("runs show: exit %d, no %q in\n%s", code, want, out)
		}
	}
	code, out, _ = runCLI(t, "runs", "--config", cfg, "--json", "show", "r1")
	var doc server.RunDocument
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.History) != 2 || doc.History[1].Code != types.CodeRejected {
		t.Fatalf("runs show --json: exit %d %v\n%s", code, err, out)
	}

	code, out, _ = runCLI(t, "replay", "r1", "--config", cfg)
	if code != 0 || !strings.Contains(out, "It matches the stored state.") || !strings.Contains(out, "9007199254740993") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}

	// Tamper with the stored state: replay says so and exits 1.
	db, err := sql.Open("sqlite", filepath.Join(filepath.Dir(cfg), "toolgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET state = '{"refunded_paise":1}' WHERE id = 'r1'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, errOut = runCLI(t, "replay", "--json", "r1", "--config", cfg)
	var rep replayReport
	err = json.Unmarshal([]byte(out), &rep)
	var stored bytes.Buffer
	_ = json.Compact(&stored, rep.StoredState)
	if code != 1 || err != nil || rep.Matches || stored.String() != `{"refunded_paise":1}` {
		t.Fatalf("tampered replay: exit %d %v\n%s%s", code, err, out, errOut)
	}
}

func TestCommandMistakes(t *testing.T) {
	cfg, _ := cliSetup(t)
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"call without tool", []string{"call", "--config", cfg, "--run", "r1"}, 2, "--tool is required"},
		{"call without run or principal", []string{"call", "--config", cfg, "--tool", "get_order"}, 2, "--run RUN, or --principal"},
		{"call with both", []string{"call", "--config", cfg, "--tool", "get_order", "--run", "r1", "--principal", `{"id":"a"}`}, 2, "--run RUN, or --principal"},
		{"call args not an object", []string{"call", "--config", cfg, "--tool", "get_order", "--run", "r1", "--args", `["ORD-1"]`}, 2, "got an array"},
		{"call args not JSON", []string{"call", "--config", cfg, "--tool", "get_order", "--run", "r1", "--args", `{order_id:1}`}, 2, "not valid JSON"},
		{"call bad principal", []string{"call", "--config", cfg, "--tool", "get_order", "--principal", `{"name":"a"}`}, 2, `no field "name"`},
		{"call unknown run", []string{"call", "--config", cfg, "--tool", "get_order", "--run", "nope"}, 1, `no run "nope"`},
		{"call state with run", []string{"call", "--config", cfg, "--tool", "get_order", "--run", "r1", "--state", `{}`}, 2, "go with --principal"},
		{"runs without show", []string{"runs", "r1", "--config", cfg}, 2, "runs show RUN"},
		{"runs show unknown", []string{"runs", "show", "nope", "--config", cfg}, 1, `no run "nope"`},
		{"replay without run", []string{"replay", "--config", cfg}, 2, "replay RUN"},
		{"replay unknown", []string{"replay", "nope", "--config", cfg}, 1, `no run "nope"`},
		{"tools unknown format", []string{"tools", "--config", cfg, "--format", "gemini"}, 2, `unknown format "gemini"`},
		{"tools missing config", []string{"tools", "--config", filepath.Join(t.TempDir(), "none.yaml")}, 1, "no such file"},
		{"serve bad log format", []string{"serve", "--config", cfg, "--log-format", "xml"}, 2, "--log-format"},
		{"serve bad log level", []string{"serve", "--config", cfg, "--log-level", "loud"}, 2, "--log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.says) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, tt.code, tt.says, out, errOut)
			}
		})
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"serve", "call", "runs", "replay", "tools"} {
		t.Run(cmd, func(t *testing.T) {
			code, _, errOut := runCLI(t, cmd, "--help")
			if cmd == "runs" {
				code, _, errOut = runCLI(t, cmd, "show", "--help")
			}
			if code != 0 || !strings.Contains(errOut, "Example:\n  toolgate "+cmd) {
				t.Fatalf("exit %d:\n%s", code, errOut)
			}
		})
	}
}

func TestToolsFormats(t *testing.T) {
	cfg, _ := cliSetup(t)
	tests := []struct {
		format string
		want   string
	}{
		{"", `"effect": "write"`},
		{"openai", `"type": "function"`},
		{"anthropic", `"input_schema": {`},
		{"mcp", `"destructiveHint": true`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			args := []string{"tools", "--config", cfg}
			if tt.format != "" {
				args = append(args, "--format", tt.format)
			}
			code, out, errOut := runCLI(t, args...)
			if code != 0 || !json.Valid([]byte(out)) || !strings.Contains(out, tt.want) || !strings.Contains(out, "issue_refund") {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}
