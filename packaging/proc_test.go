package packaging_test

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// need skips the test when the command is missing, or fails it under CI.
func need(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing (scripts/ensure-tools.sh installs it)", name)
			}
			t.Skipf("%s is missing (scripts/ensure-tools.sh installs it)", name)
		}
	}
}

// run runs a command in dir and returns its combined output, failing the
// test when it fails.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// makeVar reads NAME ?= VALUE from the Makefile, so the tests use the
// version `make snapshot` uses.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the Makefile has no %s ?= line", name)
	}
	return string(m[1])
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is a started process whose output lines a test waits for.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  []string
	more chan struct{}
	done chan struct{}
	err  error
}

// start runs a process, collecting its stdout and stderr lines.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startCmd(t, exec.Command(name, args...))
}

// startCmd is start for a command already set up.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, cmd: cmd, more: make(chan struct{}), done: make(chan struct{})}
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		w.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait returns the first line holding s, failing when the process ends or
// two minutes pass first.
func (p *proc) wait(s string) string {
	p.t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		for _, l := range p.out {
			if strings.Contains(l, s) {
				p.mu.Unlock()
				return l
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.done:
			p.mu.Lock()
			out := strings.Join(p.out, "\n")
			p.mu.Unlock()
			if strings.Contains(out, s) {
				continue
			}
			p.t.Fatalf("%s exited (%v) before printing %q:\n%s", p.cmd.Path, p.err, s, out)
		case <-timeout:
			p.t.Fatalf("%s did not print %q within two minutes", p.cmd.Path, s)
		}
	}
}

// exited waits for the process to end.
func (p *proc) exited() error {
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		p.t.Fatalf("%s did not exit within two minutes", p.cmd.Path)
	}
	return p.err
}

// arch is this machine's GOARCH, as the release names it.
var arch = runtime.GOARCH

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }
