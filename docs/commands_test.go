package docs

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/testbin"
	"github.com/toolgate/toolgate/internal/tourtest"
)

// binary is the toolgate binary TestMain builds.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// documentedCommand is one shell command of the README or a page of docs/.
type documentedCommand struct {
	// Where is the page and line ("docs/retries.md:105").
	Where string
	// Block is the line of the block's opening fence (0: the indented
	// lines; below 0: a code span), so that a command knows the ones
	// before it in its block (cd, go build -o).
	Block int
	// Tour is true for a block of the README's tour, which
	// internal/tourtest runs as printed.
	Tour bool
	// Words are the command's words, as the shell splits them.
	Words []string
}

// commandPages are the README and the pages of docs/, from this directory.
func commandPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, pages...)
}

// pageName is a page's path from the repository's root ("README.md",
// "docs/cli.md").
func pageName(page string) string {
	if name, outside := strings.CutPrefix(filepath.ToSlash(page), "../"); outside {
		return name
	}
	return "docs/" + page
}

// shellLangs are the info strings of fenced blocks whose every line is a
// command; in a console block or a block without one, only the lines after
// "$ " are.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true}

// promptLangs are the blocks that show commands after "$ " beside their output.
var promptLangs = map[string]bool{"console": true, "": true}

// documentedCommands are the commands of a page: the lines of its sh, bash
// and shell blocks, the "$ " lines of its console blocks and blocks without
// a language, the indented lines that start with "toolgate " (as
// docs/cli.md shows them), and the go, make and script commands of its
// code spans.
func documentedCommands(t testing.TB, page, text string) []documentedCommand {
	name := pageName(page)
	var out []documentedCommand
	add := func(block, firstLine int, tour bool, text string) {
		for _, c := range shellCommands(t, text) {
			out = append(out, documentedCommand{
				Where: fmt.Sprintf("%s:%d", name, firstLine+c.Line-1),
				Block: block, Tour: tour, Words: c.Words,
			})
		}
	}
	for _, b := range tourtest.Blocks(text) {
		switch {
		case shellLangs[b.Lang]:
			add(b.Line, b.Line+1, b.Marker == "tour", b.Text)
		case promptLangs[b.Lang]:
			for i, prompt := range promptLines(b.Text) {
				if prompt != "" {
					add(b.Line, b.Line+1+i, false, prompt)
				}
			}
		}
	}
	for i, cmd := range indentedCommands(text) {
		if cmd != "" {
			add(0, i+1, false, cmd)
		}
	}
	for i, line := range strings.Split(text, "\n") {
		for _, m := range inlineCommand.FindAllStringSubmatch(line, -1) {
			add(-1-i, i+1, false, m[1]) // a block of its own: cwd starts at the root
		}
	}
	return out
}

// inlineCommand finds the go, make and script commands written in the
// prose as code spans (`go test -run KinOpenAPI ./toolsource/openapi/`);
// TestInlineCommandsNameRealCommandsAndFlags reads the toolgate ones.
var inlineCommand = regexp.MustCompile("`((?:go (?:test|run|build) [^`]+)|(?:(?:make|(?:bash )?scripts/[^\\s`]+)(?: [^`]*)?))`")

// promptLines are the commands of a block after "$ ", by the block's
// line index ("" for the lines that are output), with their continuation
// lines joined.
func promptLines(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "$ ")
		if !ok {
			continue
		}
		at := i
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		out[at] = cmd
	}
	return out
}

// indentedCommands are the lines of a page, outside its fenced blocks,
// indented by four spaces and starting with "toolgate ", by the page's
// line index, with their continuation lines joined.
func indentedCommands(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	fenced := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			fenced = !fenced
			continue
		}
		cmd, ok := strings.CutPrefix(lines[i], "    toolgate ")
		if fenced || !ok {
			continue
		}
		at := i
		cmd = "toolgate " + cmd
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		out[at] = cmd
	}
	return out
}

// externalPrograms are the programs the documentation runs that are not
// toolgate's, with why this test does not check them further.
var externalPrograms = map[string]string{
	"cat": "shell", "cd": "shell", "kill": "shell", "sleep": "shell",
	"tail": "shell", "wait": "shell", "jq": "filters an output",
	"podman":     "container runtime (packaging/image_test.go runs the image the same way)",
	"systemctl":  "the host's service manager (packaging/deb_test.go checks the unit)",
	"pg_dump":    "PostgreSQL's own tool",
	"pg_restore": "PostgreSQL's own tool",
	"kubectl":    "the cluster's client (packaging/kube_test.go reads the manifests)",
}

// unwrap drops the words before the command they run: sudo, time (with
// its options), and a script of scripts/ (which
// must exist, and be executable when run without bash), noting what it
// checked.
func unwrap(root string, words []string) (rest []string, notes []string, err error) {
	for len(words) > 0 {
		switch w := words[0]; {
		case w == "sudo":
			words = words[1:]
		case w == "/usr/bin/time" || w == "time":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				if words[0] == "-f" || words[0] == "-o" {
					words = words[1:]
				}
				words = words[1:]
			}
		case w == "bash" && len(words) > 1 && strings.HasPrefix(words[1], "scripts/"):
			if _, err := os.Stat(filepath.Join(root, words[1])); err != nil {
				return nil, nil, fmt.Errorf("the script %s does not exist", words[1])
			}
			notes = append(notes, words[1]+" exists")
			words = words[2:]
		case strings.HasPrefix(w, "scripts/"):
			fi, err := os.Stat(filepath.Join(root, w))
			if err != nil {
				return nil, nil, fmt.Errorf("the script %s does not exist", w)
			}
			if fi.Mode()&0o111 == 0 {
				return nil, nil, fmt.Errorf("the script %s is not executable (chmod +x, or print `bash %s`)", w, w)
			}
			notes = append(notes, w+" is executable")
			words = words[1:]
		default:
			return words, notes, nil
		}
	}
	return nil, notes, nil
}

// commandChecker checks the commands of one page in order, remembering
// the directory a cd moved to and the binaries a go build -o made.
type commandChecker struct {
	root  string                 // the repository, from this directory
	cwd   string                 // the block's directory, relative to root
	built map[string]string      // a binary's path -> the package it was built from
	mux   *http.ServeMux         // toolgate's routes
	bench func() (string, error) // the toolgate-bench binary
}

// check checks one command and says how, or why it does not run as
// printed.
func (c *commandChecker) check(cmd documentedCommand) (string, error) {
	words, notes, err := unwrap(c.root, cmd.Words)
	if err != nil {
		return "", err
	}
	if len(words) == 0 && len(notes) > 0 {
		return strings.Join(notes, "; "), nil
	}
	if len(words) == 0 {
		return "shell (a variable or a loop's do)", nil
	}
	how, err := c.checkProgram(words, cmd.Tour)
	return strings.Join(append(notes, how), "; "), err
}

// checkProgram checks a command by its program (tour: the block is the
// README tour's).
func (c *commandChecker) checkProgram(words []string, tour bool) (string, error) {
	prog, args := words[0], words[1:]
	switch {
	case prog == "toolgate" || filepath.Base(prog) == "toolgate" || c.built[prog] == "cmd/toolgate":
		var config string // a config of the repository: it must exist
		if path := configFlag(args); strings.Contains(path, "/") && !filepath.IsAbs(path) {
			if err := c.exists(path); err != nil {
				return "", fmt.Errorf("--config %s: %v", path, err)
			}
			config = "; " + path + " exists"
		}
		how, err := checkToolgate(binary, "toolgate", args)
		return how + config, err
	case prog == "go":
		return c.checkGo(args)
	case prog == "make":
		return checkMake(c.root, args)
	case prog == "curl":
		how, err := checkCurl(c.mux, args)
		if err != nil && tour {
			return "run as printed by internal/tourtest (the tour's simulated provider)", nil
		}
		return how, err
	case prog == "python" || prog == "python3":
		if len(args) == 0 {
			return "", fmt.Errorf("python without a file")
		}
		return "the file exists", c.exists(args[0])
	case prog == "kubectl":
		for i, a := range args {
			if a == "-f" && i+1 < len(args) {
				return "the manifest exists (packaging/kube_test.go reads it)", c.exists(args[i+1])
			}
		}
		return externalPrograms[prog], nil
	case c.built[prog] != "":
		return "built above from " + c.built[prog], nil
	case prog == "cd" && len(args) == 1:
		if err := c.exists(args[0]); err != nil {
			return "", err
		}
		c.cwd = filepath.Join(c.cwd, args[0])
		return "the directory exists", nil
	case externalPrograms[prog] != "":
		return externalPrograms[prog], nil
	}
	return "", fmt.Errorf("no check knows the program %q: teach TestEveryDocumentedCommandRunsAsPrinted what it is", prog)
}

// exists checks that a path of the command (from the block's directory)
// exists.
func (c *commandChecker) exists(path string) error {
	if _, err := os.Stat(filepath.Join(c.root, c.cwd, path)); err != nil {
		return fmt.Errorf("%s does not exist (from the directory %s of the repository)", path, filepath.Join("/", c.cwd))
	}
	return nil
}

// checkToolgate runs the command line as printed with --help after it:
// toolgate's commands parse every flag (anywhere) before acting on any, so
// an unknown command or flag, or a flag value of the wrong type (a
// duration, a time), exits 2, and a line that parses prints the help and
// exits 0 without running anything (no server, store or dependency
// needed).
func checkToolgate(bin, name string, args []string) (string, error) {
	for _, a := range args {
		if a == "--" {
			return "", fmt.Errorf("cannot append --help after --")
		}
	}
	cmd := exec.Command(bin, append(append([]string{}, args...), "--help")...)
	cmd.Dir = os.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s --help: %v: the command line does not parse:\n%s", name, strings.Join(args, " "), err, out)
	}
	return "its command and flags parse (" + name + " ... --help)", nil
}

// checkMake checks that each target is one of the Makefile's.
func checkMake(root string, args []string) (string, error) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	for _, target := range args {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(makefile) {
			return "", fmt.Errorf("the Makefile has no target %q", target)
		}
	}
	return "the Makefile has the target", nil
}

// checkCurl checks that a request to toolgate's address (port 8470) goes to
// a route of the server with its method.
func checkCurl(mux *http.ServeMux, args []string) (string, error) {
	method, target := http.MethodGet, ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-X" || a == "--request":
			i++
			method = args[i]
		case a == "--json" || a == "-d" || a == "--data":
			i++
			if method == http.MethodGet {
				method = http.MethodPost
			}
		case a == "-H" || a == "--header" || a == "--retry" || a == "-o":
			i++
		case strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://"):
			target = a
		}
	}
	u, err := url.Parse(target)
	if err != nil || target == "" {
		return "", fmt.Errorf("curl without a URL toolgate serves (%q)", target)
	}
	if u.Port() != "8470" {
		return "", fmt.Errorf("curl to %s, not toolgate's address (127.0.0.1:8470): no check knows it", u.Host)
	}
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{}}
	if _, pattern := mux.Handler(req); pattern == "" {
		return "", fmt.Errorf("toolgate has no route for %s %s", method, u.Path)
	}
	return "toolgate has the route " + method + " " + u.Path, nil
}

// routes is a mux of the routes the server and `toolgate serve` register
// (the patterns TestRoutesDocumented reads).
func routes(t *testing.T) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	for _, rt := range registeredRoutes(t) {
		mux.Handle(rt.pattern, http.NotFoundHandler())
	}
	return mux
}

// benchBuilder builds cmd/toolgate-bench into dir once, when a command
// first runs it (its flags are checked as toolgate's are).
func benchBuilder(dir string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		bin := filepath.Join(dir, "toolgate-bench")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/toolgate/toolgate/cmd/toolgate-bench").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("building toolgate-bench: %v\n%s", err, out)
		}
		return bin, nil
	})
}

// Every command of the README and docs/ (blocks, "$ " lines, docs/cli.md's
// indented lines, and the go, make and script commands of code spans)
// runs as printed: each is checked the cheapest faithful way
// (internal/tourtest runs the README's tour, TestCLICommandsRunAsPrinted
// the toolgate commands that need no server):
//
//   - toolgate (also as bin/toolgate, go run ./cmd/toolgate, or a binary a
//     go build -o above made): the command line parses, run with --help
//     after it; the commands that need a running server, a dependency or
//     PostgreSQL are not run here;
//   - go test: the package exists, each alternative of -run (or -bench)
//     matches a test (or benchmark) declared in it, read with go/parser,
//     and a flag that is not go test's is one its tests declare; the
//     tests are not run again here (they take minutes);
//   - go run ./cmd/toolgate-bench: its command line parses (--help);
//   - go build, go run: the package exists;
//   - scripts/with-postgres.sh: it exists, and is executable when run
//     without bash;
//   - make: the Makefile has the target;
//   - curl to 127.0.0.1:8470: toolgate has a route for the method and path;
//   - python, kubectl -f: the file exists.
//
// A program no check knows fails the test, so a new kind of command gets
// its check.
func TestEveryDocumentedCommandRunsAsPrinted(t *testing.T) {
	mux, bench := routes(t), benchBuilder(t.TempDir())
	total := 0
	for _, page := range commandPages(t) {
		cmds := documentedCommands(t, page, read(t, page))
		c := &commandChecker{root: "..", built: map[string]string{}, mux: mux, bench: bench}
		block := -1
		for _, cmd := range cmds {
			if cmd.Block != block {
				block, c.cwd = cmd.Block, "" // each block starts at the root
			}
			how, err := c.check(cmd)
			if err != nil {
				t.Errorf("%s: %s\n%v", cmd.Where, strings.Join(cmd.Words, " "), err)
				continue
			}
			total++
			t.Logf("%s: %s: %s", cmd.Where, strings.Join(cmd.Words, " "), how)
		}
	}
	if total < 40 {
		t.Fatalf("checked %d commands; the README and docs/ print more: the reading of their blocks broke", total)
	}
}

// commandWords are the first words that make a line a command.
var commandWords = regexp.MustCompile(`^(sudo |bash )?(toolgate|bin/toolgate|curl|go|make|podman|kubectl|systemctl|pg_dump|pg_restore|scripts/\S+)( |$)`)

// A block of commands says so: a block without a language (or a console
// block) whose lines are commands but not after "$ " would escape
// TestEveryDocumentedCommandRunsAsPrinted, which reads the commands of
// sh blocks and the "$ " lines of the others.
func TestCommandBlocksAreShellBlocks(t *testing.T) {
	for _, page := range commandPages(t) {
		for _, b := range tourtest.Blocks(read(t, page)) {
			if !promptLangs[b.Lang] || strings.Contains("\n"+b.Text, "\n$ ") {
				continue
			}
			for i, line := range strings.Split(b.Text, "\n") {
				if commandWords.MatchString(strings.TrimSpace(line)) {
					t.Errorf("%s:%d: %q is a command in a block without a language: open the block with ```sh (or show it after \"$ \" beside its output)", pageName(page), b.Line+1+i, line)
					break
				}
			}
		}
	}
}

// checkCurl knows toolgate's routes by method and path, and that --json
// makes a POST.
func TestCheckCurlFindsTheRoute(t *testing.T) {
	mux := routes(t)
	cases := []struct {
		command string
		ok      bool
	}{
		{"curl -s http://127.0.0.1:8470/healthz", true},
		{"curl -s -X POST http://127.0.0.1:8470/healthz", false},
		{`curl -s --json '{"tool": "get_order"}' http://127.0.0.1:8470/v1/runs/r1/calls`, true},
		{"curl -s http://127.0.0.1:8470/v1/runs/r1/calls", false},
		{`curl -s -H "Authorization: Bearer $TOOLGATE_KEY" 'http://127.0.0.1:8470/v1/runs?since=24h&limit=20'`, true},
		{"curl -s http://127.0.0.1:8470/v1/nothing", false},
		{"curl -s http://127.0.0.1:9001/orders/ORD-4471/refunds", false},
	}
	for _, c := range cases {
		how, err := checkCurl(mux, shellCommands(t, c.command)[0].Words[1:])
		if (err == nil) != c.ok {
			t.Errorf("%s: ok %v (%s; %v), want %v", c.command, err == nil, how, err, c.ok)
		}
	}
}
