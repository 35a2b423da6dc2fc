package main

import (
	"context"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// lineWatcher is a writer that tells when a line with a given prefix has
// been written, and keeps everything for the test's messages.
type lineWatcher struct {
	mu     sync.Mutex
	buf    strings.Builder
	prefix string
	found  chan string
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range strings.Split(w.buf.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, w.prefix); ok && w.found != nil {
			w.found <- rest
			w.found = nil
		}
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// serve starts `toolgate serve` in process on a free loopback port and
// returns its base URL; cancel stops it, and the exit code arrives on the
// channel.
func serveInProcess(t *testing.T, args ...string) (base string, stderr *lineWatcher, cancel context.CancelFunc, exit chan int) {
	t.Helper()
	found := make(chan string, 1)
	stderr = &lineWatcher{prefix: "toolgate listening on ", found: found}
	ctx, cancel := context.WithCancel(context.Background())
	exit = make(chan int, 1)
	go func() {
		exit <- run(ctx, &env{stdout: stderr, stderr: stderr, getenv: os.Getenv}, append([]string{"serve"}, args...))
	}()
	select {
	case base = <-found:
	case code := <-exit:
		cancel()
		t.Fatalf("serve exited %d before listening:\n%s", code, stderr)
	}
	return base, stderr, cancel, exit
}

func TestServeInProcess(t *testing.T) {
	cfg, _ := cliSetup(t)
	base, stderr, cancel, exit := serveInProcess(t, "--config", cfg, "--listen", "127.0.0.1:0", "--log-format", "json")
	defer cancel()
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Post(base+"/v1/runs", "application/json", strings.NewReader(`{"run_id":"r1","principal":{"id":"cust_42"}}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create run: %v %v", resp, err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), `"msg":"shutting down`) {
		t.Errorf("no JSON shutdown log:\n%s", stderr)
	}
}

func TestServeRefusesOpenAddressWithoutKeys(t *testing.T) {
	cfg, _ := cliSetup(t)
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		code, _, errOut := runCLI(t, "serve", "--config", cfg, "--listen", addr)
		if code != 1 || !strings.Contains(errOut, "loopback") || strings.Contains(errOut, "listening") {
			t.Errorf("serve --listen %s: exit %d\n%s", addr, code, errOut)
		}
	}
}

// TestTuneGC: serve raises GOGC unless the environment sets it.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("without GOGC: GC percent %d, want %d", got, serveGCPercent)
	}
	tuneGC(func(k string) string { return map[string]string{"GOGC": "50"}[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=50 in the environment: GC percent changed to %d", got)
	}
}
