package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testsupport/testbin"
)

// binary is the toolgate binary built once for the whole suite.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// proc is one running `toolgate serve`.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	dir  string
	out  *lines
	done chan struct{}
	err  error // the exit status, once done is closed
}

// lines keeps a process's stderr and wakes those waiting for a line.
type lines struct {
	mu      sync.Mutex
	all     []string
	changed chan struct{}
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
	close(l.changed)
	l.changed = make(chan struct{})
}

// find returns the first line holding s, or a channel that is closed when
// more lines arrive.
func (l *lines) find(s string) (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.all {
		if strings.Contains(line, s) {
			return line, nil
		}
	}
	return "", l.changed
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// startServe writes config (PROVIDER and DEAD replaced) into a fresh
// directory and starts `toolgate serve` on a free loopback port; it
// returns once the server says it is listening.
func startServe(t *testing.T, config string, extra ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--config", path, "--listen", "127.0.0.1:0"}, extra...)
	p := &proc{t: t, cmd: exec.Command(binary, args...), dir: dir, done: make(chan struct{}),
		out: &lines{changed: make(chan struct{})}}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.out.add(sc.Text())
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	line := p.waitLine("toolgate listening on ")
	p.base = strings.TrimSpace(line[strings.Index(line, "http://"):])
	return p
}

// waitLine waits for a line of stderr holding s, failing if the process
// exits or a minute passes first.
func (p *proc) waitLine(s string) string {
	p.t.Helper()
	timeout := time.After(time.Minute)
	for {
		line, more := p.out.find(s)
		if more == nil {
			return line
		}
		select {
		case <-more:
		case <-p.done:
			if line, more := p.out.find(s); more == nil {
				return line
			}
			p.t.Fatalf("toolgate exited (%v) before saying %q:\n%s", p.err, s, p.out)
		case <-timeout:
			p.t.Fatalf("toolgate did not say %q within a minute:\n%s", s, p.out)
		}
	}
}

// exitCode waits for the process to end and returns its exit code.
func (p *proc) exitCode() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		p.t.Fatalf("toolgate did not exit:\n%s", p.out)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("toolgate: %v", p.err)
	}
	return 0
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// decode decodes the answer's JSON body, numbers exact.
func (a *answer) decode(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("HTTP %d, body not JSON: %v\n%s", a.status, err, a.body)
	}
}

// request is one HTTP request to the server.
type request struct {
	method, path, key string
	// ctype defaults to application/json for a body; "-" sends none.
	ctype string
	body  io.Reader
}

var client = &http.Client{Timeout: 2 * time.Minute}

func (p *proc) do(r request) *answer {
	p.t.Helper()
	hr, err := http.NewRequest(r.method, p.base+r.path, r.body)
	if err != nil {
		p.t.Fatal(err)
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	switch {
	case r.ctype == "-":
	case r.ctype != "":
		hr.Header.Set("Content-Type", r.ctype)
	case r.body != nil:
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(hr)
	if err != nil {
		p.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("%s %s: reading the answer: %v", r.method, r.path, err)
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: body}
}

func (p *proc) post(path, key, body string) *answer {
	p.t.Helper()
	return p.do(request{method: "POST", path: path, key: key, body: strings.NewReader(body)})
}

func (p *proc) get(path, key string) *answer {
	p.t.Helper()
	return p.do(request{method: "GET", path: path, key: key})
}

// deadAddress is a loopback address where nothing listens.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

// runBinary runs toolgate to its end and returns its combined output and
// exit code.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("toolgate %v: %v", args, err)
	}
	return string(out), 0
}
