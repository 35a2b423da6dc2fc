package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/testbin"
)

var (
	checkBinOnce sync.Once
	checkBin     string
	checkBinErr  error
)

// toolgateBinary builds the real binary once for this package's tests
// (with the race detector when they run with it).
func toolgateBinary(t *testing.T) string {
	t.Helper()
	checkBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolgate-check-")
		if err != nil {
			checkBinErr = err
			return
		}
		checkBin = filepath.Join(dir, "toolgate")
		args := []string{"build", "-o", checkBin}
		if testbin.Race {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			checkBinErr = &buildError{out: string(out), err: err}
		}
	})
	if checkBinErr != nil {
		t.Fatal(checkBinErr)
	}
	return checkBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// runBinary runs the binary with env added to this process's environment.
func runBinary(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(toolgateBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestCheckFindsEveryProblemInOneRun: six mistakes of different stages
// (a bad schema, a duplicate key, an unknown key, an argument the schema
// does not declare, a deny that is an int, a verify lookup naming no tool)
// are six located lines of one run of the real binary, in file order.
func TestCheckFindsEveryProblemInOneRun(t *testing.T) {
	path := filepath.Join("testdata", "check", "six.yaml")
	out, code := runBinary(t, nil, "check", "--config", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	want := []string{
		path + ":18:5: tools.notify.input_schema: is not a valid JSON Schema",
		path + `:24:5: tools.issue_refund.dependency: "dependency" is given twice in this mapping (first on line 23)`,
		path + `:27:5: tools.issue_refund.permision: unknown key "permision"; did you mean permission?`,
		path + ":36:9: tools.issue_refund.rules[0].deny: undefined field 'amount' (the input schema declares amount_paise, order_id; did you mean amount_paise?)",
		path + ":38:9: tools.issue_refund.rules[1].deny: expression yields int, want a bool condition",
		path + `:41:7: tools.issue_refund.verify.lookup: no tool named "list_refund"; did you mean list_refunds?`,
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 1+len(want) || lines[0] != path+": 6 problems:" {
		t.Fatalf("want a header and six problems, got:\n%s", out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[1+i], w) {
			t.Errorf("line %d:\n got %s\nwant %s...", 1+i, lines[1+i], w)
		}
	}
}

// TestCheckPrintsNoSecret: a secret in the environment never appears in
// check's output, whether the problem is a YAML error next to it or a
// message quoting the value it fills in; a config path that is a symbolic
// link to another kind of file is refused by name, its content unread.
func TestCheckPrintsNoSecret(t *testing.T) {
	const secret = "s3cr3t-Value-0123456789"
	dir := t.TempDir()
	shadow := filepath.Join(dir, "shadow")
	if err := os.WriteFile(shadow, []byte("root:$6$"+secret+":19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "toolgate.yaml")
	if err := os.Symlink(shadow, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		want       string
	}{
		{"yaml error beside the secret", "yamlerror.yaml", "yamlerror.yaml:5:"},
		{"value quoted in a message", "quoted.yaml", `dependencies.payments.base_url: "${PAYMENTS_URL}" must start with http://`},
		{"symlink to a shadow file", "", "is a symbolic link to " + shadow + ", which is not a .yaml"},
	}
	for _, tt := range tests {
		path := link
		if tt.file != "" {
			path = filepath.Join("testdata", "check", tt.file)
		}
		out, code := runBinary(t, []string{"TG_SECRET_KEY=" + secret, "PAYMENTS_URL=ftp://" + secret}, "check", "--config", path)
		if code != 1 || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, want 1 and %q:\n%s", tt.name, code, tt.want, out)
		}
		if strings.Contains(out, secret) {
			t.Errorf("%s: the output carries the secret:\n%s", tt.name, out)
		}
	}
}

// TestCheckOutputInDocs: docs/config.md shows the output of checking
// six.yaml as toolgate.yaml; it must be what the binary prints.
func TestCheckOutputInDocs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "check", "six.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toolgate.yaml"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(toolgateBinary(t), "check", "--config", "toolgate.yaml")
	cmd.Dir = dir
	out, _ := cmd.Output() // exit 1 expected; stdout holds the problems
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "<!-- check output -->\n```\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/config.md has no check output block after <!-- check output -->")
	}
	if block != string(out) {
		t.Errorf("docs/config.md's check output differs from the binary's:\ndocs:\n%s\nbinary:\n%s", block, out)
	}
}
