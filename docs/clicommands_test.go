package docs

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// runCommands are the toolgate commands TestCLICommandsRunAsPrinted runs
// as the pages print them (with --config toolgate.yaml, or none: the
// default): those that read a config and its store, and those that call
// the payments provider, which a simulated one answers.
var runCommands = map[string]bool{
	"check": true, "runs list": true, "runs show": true, "replay": true, "whatif": true,
	"approvals list": true, "stats": true, "executions export": true, "prune": true,
	"tools": true, "migrate": true, "version": true, "call": true, "reconcile": true,
}

// notRun says why the other commands are checked (their command line
// parses, TestEveryDocumentedCommandRunsAsPrinted) but not run here.
var notRun = map[string]string{
	"serve":             "serves until stopped on the config's fixed ports: the README's tour and the e2e tests run it",
	"sim":               "a simulated provider that serves until stopped: the README's tour runs it",
	"mcp":               "serves MCP on stdin until it closes: cmd/toolgate's mcp tests run it",
	"demo":              "replays the incident in real time: cmd/toolgate's demo tests run it",
	"backup":            "writes outside the working directory (/var/backups): cmd/toolgate's TestBackupRestoreReplay runs it",
	"reload":            "signals a running server",
	"approvals approve": "needs a pending approval of that id",
	"approvals deny":    "needs a pending approval of that id",
}

// ownTests are the pages whose commands run beside a config of the page's
// own, in a test of their own, rather than beside the complete example.
var ownTests = map[string]string{
	"docs/openapi.md": "TestOpenAPIExampleRunsAsPrinted",
}

// toolgateCommand is the command name ("runs list") and the arguments of a
// documented toolgate command (the pages write the command first), or ok
// false for another program.
func toolgateCommand(words []string) (name string, args []string, ok bool) {
	switch {
	case len(words) > 0 && filepath.Base(words[0]) == "toolgate":
		args = words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/toolgate":
		args = words[3:]
	default:
		return "", nil, false
	}
	switch {
	case len(args) == 0:
		return "", args, true
	case len(args) > 1 && !strings.HasPrefix(args[1], "-") && strings.Contains(" runs approvals executions ", " "+args[0]+" "):
		return args[0] + " " + args[1], args, true // runs list, approvals deny, executions export
	}
	return args[0], args, true
}

// configFlag is the value of a command line's --config ("toolgate.yaml",
// its default, when absent).
func configFlag(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
		if a == "--config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return "toolgate.yaml"
}

// Every toolgate command of the README and docs/ that reads a config and
// its store, or calls a tool, runs as printed and exits 0. Each page's
// commands run in order in a throwaway directory of their own: its
// toolgate.yaml is the complete example of docs/config.md without its
// imports, its payments dependency a simulated provider (toolgate sim
// payments) on a free port, its store a SQLite file beside it holding run
// p1 of key support-bot (the run the pages show), and toolgate.new.yaml a
// copy for whatif. The tour's commands are left to internal/tourtest, a
// page of ownTests to its own test, and a command with another --config
// (a path of the host) is only checked; every other command says in
// notRun why it is not run.
func TestCLICommandsRunAsPrinted(t *testing.T) {
	var full map[string]any
	if err := yaml.Unmarshal([]byte(fullExample(t)), &full); err != nil {
		t.Fatal(err)
	}
	base := withoutImports(full)
	ran := 0
	for _, page := range commandPages(t) {
		var w *workdir
		for _, cmd := range documentedCommands(t, page, read(t, page)) {
			words, _, err := unwrap("..", cmd.Words)
			if err != nil {
				continue // TestEveryDocumentedCommandRunsAsPrinted reports it
			}
			name, args, ok := toolgateCommand(words)
			where, _, _ := strings.Cut(cmd.Where, ":")
			if !ok || cmd.Tour || ownTests[where] != "" {
				continue
			}
			if !runCommands[name] {
				if notRun[name] == "" {
					t.Errorf("%s: toolgate %s: neither run here (runCommands) nor said why not (notRun)", cmd.Where, name)
				}
				continue
			}
			if configFlag(args) != "toolgate.yaml" && configFlag(args) != "toolgate.new.yaml" {
				continue // a path of the host (/etc/toolgate/toolgate.yaml, /tmp/gh.yaml)
			}
			if w == nil {
				w = newWorkdir(t, base)
			}
			out, err := w.run(args...)
			if err != nil {
				t.Errorf("%s: toolgate %s: %v\n%s", cmd.Where, strings.Join(args, " "), err, out)
				continue
			}
			ran++
			t.Logf("%s: toolgate %s: exit 0", cmd.Where, strings.Join(args, " "))
		}
	}
	if ran < 20 {
		t.Fatalf("ran %d commands; the pages print more", ran)
	}
}

// workdir is a page's throwaway directory: a config whose payments
// dependency is a simulated provider, and a store with run p1.
type workdir struct {
	dir string
	env []string // with a value for each ${VAR} of the config
}

// newWorkdir makes a page's directory from a config (the complete example
// without its imports), starting the provider its payments dependency
// calls and recording run p1 of key support-bot (stored as
// support-bot/p1, as a run that key creates over HTTP is).
func newWorkdir(t *testing.T, base map[string]any) *workdir {
	t.Helper()
	w := &workdir{dir: t.TempDir()}
	cfg := mergeFragment(base, map[string]any{"dependencies": map[string]any{
		"payments": map[string]any{"base_url": startProvider(t)},
	}})
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"toolgate.yaml", "toolgate.new.yaml"} {
		if err := os.WriteFile(filepath.Join(w.dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.env = os.Environ()
	for _, m := range placeholder.FindAllStringSubmatch(string(raw), -1) {
		w.env = append(w.env, m[1]+"=an-example-secret-0123456789")
	}
	if out, err := w.run("call", "--owner", "support-bot", "--run-id", "p1", "--principal", `{"id":"cust_42","permissions":["refunds:write"]}`,
		"--tool", "get_order", "--args", `{"order_id":"ORD-4471"}`); err != nil {
		t.Fatalf("recording run p1: %v\n%s", err, out)
	}
	return w
}

// run runs toolgate in the directory.
func (w *workdir) run(args ...string) ([]byte, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	return cmd.CombinedOutput()
}

// startProvider starts toolgate sim payments on a free port (it honours
// the operation key, as the complete example's idempotency.header says)
// and returns its address; the test's end stops it.
func startProvider(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(binary, "sim", "payments", "--listen", "127.0.0.1:0", "--honour-keys")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	_, addr, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("toolgate sim payments said %q (%v), not where it listens", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return addr
}
