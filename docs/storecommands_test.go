package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// storeCommands are the toolgate commands that read a config and its
// store and send nothing: TestStoreCommandsRunAsPrinted runs each one the
// pages print with --config toolgate.yaml (or none: the default).
var storeCommands = map[string]bool{
	"check": true, "runs list": true, "approvals list": true, "stats": true,
	"executions export": true, "prune": true, "tools": true, "migrate": true, "version": true,
}

// notRun says why the other commands are checked (their command line
// parses, TestEveryDocumentedCommandRunsAsPrinted) but not run here.
var notRun = map[string]string{
	"serve":             "serves until stopped: the README's tour and the e2e tests run it",
	"sim":               "a simulated provider that serves until stopped: the README's tour runs it",
	"mcp":               "serves MCP on stdin until it closes: cmd/toolgate's mcp tests run it",
	"call":              "sends the call to a dependency",
	"reconcile":         "sends verify reads to the dependencies",
	"demo":              "replays the incident in real time: cmd/toolgate's demo tests run it",
	"backup":            "writes outside the working directory (/var/backups)",
	"reload":            "signals a running server",
	"runs show":         "needs a recorded run: the README's tour shows its run",
	"replay":            "needs a recorded run: the README's tour replays its run",
	"whatif":            "needs a recorded run and a second config",
	"approvals approve": "needs a pending approval",
	"approvals deny":    "needs a pending approval",
}

// ownTests are the pages whose commands run beside a config of the page's
// own, in a test of their own, rather than beside the complete example.
var ownTests = map[string]string{
	"docs/openapi.md": "TestOpenAPIExampleRunsAsPrinted",
}

// toolgateCommand is the command name ("runs list") and the arguments of a
// documented toolgate command, or ok false for another program.
func toolgateCommand(words []string) (name string, args []string, ok bool) {
	switch {
	case len(words) > 0 && filepath.Base(words[0]) == "toolgate":
		args = words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/toolgate":
		args = words[3:]
	default:
		return "", nil, false
	}
	var positional []string
	for i := 0; i < len(args) && len(positional) < 2; i++ {
		if !strings.HasPrefix(args[i], "-") {
			positional = append(positional, args[i])
		}
	}
	switch {
	case len(positional) == 0:
		return "", args, true
	case len(positional) == 2 && strings.Contains(" runs approvals executions ", " "+positional[0]+" "):
		return positional[0] + " " + positional[1], args, true
	}
	return positional[0], args, true
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
// its store and sends nothing runs as printed, in a throwaway directory
// whose toolgate.yaml is the complete example of docs/config.md without
// its imports (a SQLite store beside it), and exits 0. The tour's
// commands are left to internal/tourtest, a page of ownTests to its own
// test, and a command with another
// --config (a path of the host) is only checked; every other command
// says in notRun why it is not run.
func TestStoreCommandsRunAsPrinted(t *testing.T) {
	var full map[string]any
	if err := yaml.Unmarshal([]byte(fullExample(t)), &full); err != nil {
		t.Fatal(err)
	}
	cfg, err := yaml.Marshal(withoutImports(full))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toolgate.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	for _, m := range placeholder.FindAllStringSubmatch(string(cfg), -1) {
		env = append(env, m[1]+"=an-example-secret-0123456789")
	}
	ran := 0
	for _, page := range commandPages(t) {
		for _, cmd := range documentedCommands(page, read(t, page)) {
			words, _, err := unwrap("..", cmd.Words)
			if err != nil {
				continue // TestEveryDocumentedCommandRunsAsPrinted reports it
			}
			name, args, ok := toolgateCommand(words)
			page, _, _ := strings.Cut(cmd.Where, ":")
			if !ok || cmd.Tour || ownTests[page] != "" {
				continue
			}
			if !storeCommands[name] {
				if notRun[name] == "" {
					t.Errorf("%s: toolgate %s: neither run here (storeCommands) nor said why not (notRun)", cmd.Where, name)
				}
				continue
			}
			if configFlag(args) != "toolgate.yaml" {
				continue // a path of the host (/etc/toolgate/toolgate.yaml, /tmp/gh.yaml)
			}
			run := exec.Command(binary, args...)
			run.Dir, run.Env = dir, env
			out, err := run.CombinedOutput()
			if err != nil {
				t.Errorf("%s: toolgate %s: %v\n%s", cmd.Where, strings.Join(args, " "), err, out)
				continue
			}
			ran++
			t.Logf("%s: toolgate %s: exit 0", cmd.Where, strings.Join(args, " "))
		}
	}
	if ran < 10 {
		t.Fatalf("ran %d commands; the pages print more that read only the store", ran)
	}
}
