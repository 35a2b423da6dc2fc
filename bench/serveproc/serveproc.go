// Package serveproc builds the real toolgate binary and runs
// `toolgate serve` as a child process on a loopback port, for the load
// comparison and the fault-injection soak: what they measure is the
// product as users run it, HTTP and all.
package serveproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Package is the import path of the toolgate command.
const Package = "github.com/toolgate/toolgate/cmd/toolgate"

// Build compiles the toolgate command into dir and returns the binary's
// path. race builds it with the race detector. The go command must be on
// PATH and the working directory inside the module (or its module cache).
func Build(ctx context.Context, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "toolgate")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, Package)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", Package, err, out.String())
	}
	return bin, nil
}

// Options start one `toolgate serve`.
type Options struct {
	// Binary is the toolgate binary (see Build). Required.
	Binary string
	// Config is the path of the toolgate.yaml to serve. Required.
	Config string
	// Args are extra flags for `toolgate serve` (for example
	// "--log-level", "warn").
	Args []string
	// StartTimeout bounds the wait for "toolgate listening on". Default 1m.
	StartTimeout time.Duration
	// KeepLines is how many of the last stderr lines are kept for Stderr.
	// Default 200.
	KeepLines int
}

// Process is one running `toolgate serve` (or another server, see
// StartCommand).
type Process struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT".
	URL string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit status, once done is closed

	mu     sync.Mutex
	lines  []string // the last KeepLines lines of stderr
	keep   int
	counts map[string]int // lines holding each watched marker
}

// watched are the stderr markers Process counts (see Count).
var watched = []string{"level=ERROR", "WARNING: DATA RACE", "panic:"}

// Start runs `toolgate serve --config C --listen 127.0.0.1:0 ARGS...` and
// returns once the server says where it listens. The process is not tied
// to ctx: end it with Stop.
func Start(ctx context.Context, o Options) (*Process, error) {
	args := append([]string{o.Binary, "serve", "--config", o.Config, "--listen", "127.0.0.1:0"}, o.Args...)
	return StartCommand(ctx, args, "toolgate listening on ", o.StartTimeout, o.KeepLines)
}

// StartCommand runs argv and returns once a line of its stderr holds
// ready followed by a URL, which becomes the Process's URL. A zero
// timeout means a minute, a zero keep 200 lines. The process is not tied
// to ctx: end it with Stop.
func StartCommand(ctx context.Context, argv []string, ready string, timeout time.Duration, keep int) (*Process, error) {
	if timeout <= 0 {
		timeout = time.Minute
	}
	if keep <= 0 {
		keep = 200
	}
	p := &Process{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{}), keep: keep, counts: map[string]int{}}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, ready); i >= 0 {
				select {
				case listening <- strings.TrimSpace(line[i+len(ready):]):
				default:
				}
			}
			p.add(line)
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case url := <-listening:
		p.URL = url
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited (%v) before saying %q:\n%s", argv[0], p.err, ready, p.Stderr())
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return nil, fmt.Errorf("%s did not say %q:\n%s", argv[0], ready, p.Stderr())
}

func (p *Process) add(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range watched {
		if strings.Contains(line, m) {
			p.counts[m]++
		}
	}
	if len(p.lines) == p.keep {
		copy(p.lines, p.lines[1:])
		p.lines = p.lines[:p.keep-1]
	}
	p.lines = append(p.lines, line)
}

// Pid is the server's process id (for a profiler).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stderr returns the last lines the server wrote to stderr.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// ErrorLines is how many stderr lines were logged at level ERROR.
func (p *Process) ErrorLines() int { return p.count("level=ERROR") }

// Races is how many data races the server reported (a -race binary).
func (p *Process) Races() int { return p.count("WARNING: DATA RACE") }

// Panics is how many panics the server printed.
func (p *Process) Panics() int { return p.count("panic:") }

func (p *Process) count(marker string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[marker]
}

// Stop sends SIGTERM (the server lets calls in flight finish, then exits)
// and waits for the exit, killing the process after timeout. It returns
// nil when the server exited with status 0.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.exitError()
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.exitError()
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", p.cmd.Path, timeout)
	}
}

func (p *Process) exitError() error {
	if p.err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return fmt.Errorf("%s exited with status %d", filepath.Base(p.cmd.Path), ee.ExitCode())
	}
	return fmt.Errorf("%s: %w", filepath.Base(p.cmd.Path), p.err)
}
