package docs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/tourtest"
)

// jqIndex is the one jq filter the pages pipe into: an element of a list.
var jqIndex = regexp.MustCompile(`^\.([a-z_]+)\[([0-9]+)\]$`)

// docs/openapi.md's example runs as printed: its config, written as
// toolgate.yaml beside the petstore document it names (the files of
// testdata/openapi/petstore/, as the page says), passes toolgate check,
// and each command of the console block after it prints what the page
// shows ("..." matches any text; the document's directory is the
// page's /srv/tg).
func TestOpenAPIExampleRunsAsPrinted(t *testing.T) {
	var config, console *tourtest.Block
	for _, b := range tourtest.Blocks(read(t, "openapi.md")) {
		switch {
		case b.Lang == "yaml" && config == nil:
			config = &b
		case b.Lang == "console" && config != nil && console == nil:
			console = &b
		}
	}
	if config == nil || console == nil {
		t.Fatal("docs/openapi.md lacks its example: a yaml block, then a console block")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toolgate.yaml"), []byte(config.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"petstore.yaml", "schemas.yaml"} {
		raw := read(t, filepath.Join("..", "testdata", "openapi", "petstore", name))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := consoleSteps(console.Text)
	if len(steps) < 2 {
		t.Fatalf("docs/openapi.md:%d: %d commands in the console block, want its check and tools", console.Line, len(steps))
	}
	for _, s := range steps {
		cmds := shellCommands(t, s.command)
		words, _, err := unwrap("..", cmds[0].Words)
		if err != nil || len(words) == 0 || words[0] != "toolgate" {
			t.Fatalf("docs/openapi.md: %q is not a toolgate command", s.command)
		}
		run := exec.Command(binary, words[1:]...)
		run.Dir = dir
		run.Env = append(os.Environ(), "PETSTORE_TOKEN=an-example-token")
		out, err := run.CombinedOutput()
		if err != nil {
			t.Errorf("docs/openapi.md: %s: %v\n%s", s.command, err, out)
			continue
		}
		want := strings.ReplaceAll(s.output, "/srv/tg", dir)
		if len(cmds) == 1 {
			if err := tourtest.MatchText(want, string(out)); err != nil {
				t.Errorf("docs/openapi.md: %s: %v", s.command, err)
			}
			continue
		}
		// toolgate tools ... | jq '.tools[0]'
		m := jqIndex.FindStringSubmatch(strings.Join(cmds[1].Words[1:], " "))
		if len(cmds) != 2 || cmds[1].Words[0] != "jq" || m == nil {
			t.Fatalf("docs/openapi.md: %s: only a pipe into jq '.KEY[N]' is understood here", s.command)
		}
		var doc map[string][]json.RawMessage
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("docs/openapi.md: %s: %v\n%s", s.command, err, out)
		}
		i, _ := strconv.Atoi(m[2])
		if len(doc[m[1]]) <= i {
			t.Fatalf("docs/openapi.md: %s: the output has no %s[%d]:\n%s", s.command, m[1], i, out)
		}
		if err := tourtest.MatchJSON(want, string(doc[m[1]][i])); err != nil {
			t.Errorf("docs/openapi.md: %s: %v", s.command, err)
		}
	}
}

// consoleStep is one "$ " command of a console block and the output
// shown under it.
type consoleStep struct {
	command, output string
}

// consoleSteps splits a console block into its commands and outputs.
func consoleSteps(text string) []consoleStep {
	var steps []consoleStep
	for _, line := range strings.Split(text, "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, consoleStep{command: cmd})
			continue
		}
		if len(steps) > 0 {
			steps[len(steps)-1].output += line + "\n"
		}
	}
	return steps
}
