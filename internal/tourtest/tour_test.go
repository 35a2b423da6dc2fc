package tourtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testsupport/testbin"
)

var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// root is the repository, from this package's directory.
const root = "../.."

// tourDirs are the repository's folders the tour reads its files from: they
// are copied, ports swapped, into the tour's working directory.
var tourDirs = []string{"examples/tour"}

// The README's tour, run as printed: its tour blocks in order in one bash,
// in a directory holding the files it uses, with the real toolgate on PATH,
// every port it names swapped for a free one. Each block must succeed and
// print what its output block shows; the simulated providers must have
// made one refund each.
func TestTheREADMETourRunsAsPrinted(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the tour needs curl")
		}
		t.Skip("the tour needs curl")
	}
	readme := readFile(t, filepath.Join(root, "README.md"))
	steps, excerpts, err := Tour(Blocks(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 10 {
		t.Fatalf("the README's tour has %d blocks; it lost its <!-- tour --> markers", len(steps))
	}
	for _, e := range excerpts {
		if !strings.Contains(readFile(t, filepath.Join(root, e.Path)), e.Text) {
			t.Errorf("README.md:%d shows a part of %s that is not in it (word for word)", e.Line, e.Path)
		}
	}
	dir := t.TempDir()
	swap := freePorts(t, tourTexts(t, steps)...)
	copyTourFiles(t, dir, swap)
	out := runTour(t, dir, steps, swap)
	for i, s := range steps {
		got, ok := out.blocks[i]
		if !ok {
			t.Fatalf("README.md:%d: the tour stopped before this block; it printed:\n%s", s.Run.Line, out.all)
		}
		if got.failed != "" {
			t.Errorf("README.md:%d: a command failed: %s\n%s", s.Run.Line, got.failed, got.text)
		}
		if s.Want == nil {
			continue
		}
		want := SwapPorts(s.Want.Text, swap)
		match := MatchText
		if s.Want.Lang == "json" {
			match = MatchJSON
		}
		if err := match(want, got.text); err != nil {
			t.Errorf("README.md:%d: the output of the block at line %d differs: %v", s.Want.Line, s.Run.Line, err)
		}
	}
	checkRefunds(t, dir)
}

// tourTexts are the texts whose ports the tour uses.
func tourTexts(t *testing.T, steps []Step) []string {
	var texts []string
	for _, s := range steps {
		texts = append(texts, s.Run.Text)
		if s.Want != nil {
			texts = append(texts, s.Want.Text)
		}
	}
	for _, d := range tourDirs {
		files, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			texts = append(texts, readFile(t, filepath.Join(root, d, f.Name())))
		}
	}
	return texts
}

// freePorts maps each port the texts name to a free one.
func freePorts(t *testing.T, texts ...string) map[string]string {
	swap := map[string]string{}
	var held []net.Listener
	for _, p := range Ports(texts...) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ln)
		swap[p] = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range held {
		ln.Close()
	}
	return swap
}

func copyTourFiles(t *testing.T, dir string, swap map[string]string) {
	for _, d := range tourDirs {
		files, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			text := SwapPorts(readFile(t, filepath.Join(root, d, f.Name())), swap)
			if err := os.WriteFile(filepath.Join(dir, d, f.Name()), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// blockOutput is what one tour block printed, and the first command of it
// that failed.
type blockOutput struct {
	text, failed string
}

type tourOutput struct {
	all    string
	blocks map[int]blockOutput
}

var (
	beginPattern = regexp.MustCompile(`(?m)^@@tour-begin (\d+)@@\n`)
	failPattern  = regexp.MustCompile(`(?m)^@@tour-fail (.*)@@\n`)
)

// runTour runs the steps in one bash and splits what it printed by block.
func runTour(t *testing.T, dir string, steps []Step, swap map[string]string) tourOutput {
	var script strings.Builder
	script.WriteString("trap 'printf \"@@tour-fail %s (exit %d)@@\\n\" \"$BASH_COMMAND\" $?' ERR\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '@@tour-begin %d@@\\n'\n{\n%s} 2>&1\n", i, SwapPorts(s.Run.Text, swap))
	}
	script.WriteString("printf '@@tour-begin end@@\\n'\n")
	if err := os.WriteFile(filepath.Join(dir, "tour.sh"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(bin, "toolgate")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-o", "pipefail", "tour.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group: whatever the tour leaves running is ended
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if err := cmd.Wait(); err != nil {
		t.Errorf("the tour's bash: %v", err)
	}
	return splitTour(out.String())
}

func splitTour(all string) tourOutput {
	res := tourOutput{all: all, blocks: map[int]blockOutput{}}
	locs := beginPattern.FindAllStringSubmatchIndex(all, -1)
	for i, loc := range locs {
		n, err := strconv.Atoi(all[loc[2]:loc[3]])
		if err != nil {
			continue
		}
		end := len(all)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		text := all[loc[1]:end]
		var b blockOutput
		if m := failPattern.FindStringSubmatch(text); m != nil {
			b.failed = m[1]
		}
		b.text = failPattern.ReplaceAllString(text, "")
		res.blocks[n] = b
	}
	return res
}

var countsPattern = regexp.MustCompile(`refund requests received: (\d+), refunds made: (\d+)`)

// checkRefunds reads what each simulated provider says it did when it was
// stopped (the tour stops them): one refund each.
func checkRefunds(t *testing.T, dir string) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sims := 0
	for _, l := range logs {
		text := readFile(t, l)
		if !strings.Contains(text, "payments simulator listening") {
			continue
		}
		sims++
		m := countsPattern.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s: the simulator did not say what it did (was it stopped?):\n%s", filepath.Base(l), text)
			continue
		}
		if m[2] != "1" {
			t.Errorf("%s: %s refunds made, want 1 (%s refund requests received): the tour makes a duplicate", filepath.Base(l), m[2], m[1])
		}
	}
	if sims != 2 {
		t.Errorf("found %d simulators' logs, want 2 (one honouring keys, one not)", sims)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
