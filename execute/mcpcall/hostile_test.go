package mcpcall_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// hostileGateway opens a gateway whose only dependency, h, is the test
// binary serving mode as a stdio MCP server; it returns the gateway and
// the server's log (one line per process start and per tools/list).
func hostileGateway(t *testing.T, mode string, opt func(*toolgate.Options), extra string) (*toolgate.Gateway, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "hostile.log")
	text := fmt.Sprintf(`store: memory
dependencies:
  h:
    mcp: {command: [%s], env: {%s: %s, %s: %s}}
    import: {tools: ["*"]}
%s`, strconv.Quote(exe), hostileEnv, mode, hostileLog, strconv.Quote(logPath), extra)
	cfg, err := config.Parse([]byte(text), filepath.Join(t.TempDir(), "toolgate.yaml"), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	opts := toolgate.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		ImportTimeout: 2 * time.Minute} // a loaded machine with the race detector reads 5 MB slowly
	if opt != nil {
		opt(&opts)
	}
	gw, err := toolgate.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw, logPath
}

// logLines counts the lines of the hostile server's log equal to what.
func logLines(t *testing.T, path, what string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == what {
			n++
		}
	}
	return n
}

// syncBuffer is a log destination safe for the pool's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += len(p)
	if b.buf.Len() < 1<<16 {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// TestToolsListBounded: a tools/list that never ends is cut, at 100 pages
// or 5,000 tools, and a cursor seen before ends it; the gateway starts with
// the tools read.
func TestToolsListBounded(t *testing.T) {
	for _, c := range []struct {
		mode  string
		tools int
		lists int
	}{
		{"pages", 100, 100},
		{"many", 5000, 5},
		{"loop", 2, 2},
	} {
		t.Run(c.mode, func(t *testing.T) {
			gw, log := hostileGateway(t, c.mode, nil, "")
			if n := len(gw.Config().Tools); n != c.tools {
				t.Errorf("%d tools, want %d", n, c.tools)
			}
			if n := logLines(t, log, "tools/list"); n != c.lists {
				t.Errorf("%d tools/list requests, want %d", n, c.lists)
			}
		})
	}
}

// TestHostileToolsLeftOut: the depth-24 $ref bomb and a flat 5 MB
// schema are left out (the gateway starts with the other tools), and a
// 3 MB description is cut at 1,000 bytes with a marker. One subtest per
// hostile tool, so that each fails on its own without its bound.
func TestHostileToolsLeftOut(t *testing.T) {
	for _, mode := range []string{"bomb", "flat", "long"} {
		t.Run(mode, func(t *testing.T) {
			logs := &syncBuffer{}
			gw, _ := hostileGateway(t, mode, func(o *toolgate.Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) }, "")
			tools := gw.Config().Tools
			if tools["ok"] == nil {
				t.Fatal("ok is missing")
			}
			if mode != "long" {
				if tools[mode] != nil {
					t.Errorf("%s was imported", mode)
				}
				if !strings.Contains(logs.String(), "tool "+mode+": inputSchema") {
					t.Errorf("no warning names %s:\n%s", mode, logs.String())
				}
				return
			}
			long := tools["long"]
			if long == nil {
				t.Fatal("long is missing")
			}
			if d := long.Description; len(d) > config.MaxDescriptionBytes || !strings.HasSuffix(d, config.DescriptionCut) || !utf8.ValidString(d) {
				t.Errorf("long's description: %d bytes, ends %q", len(d), d[max(0, len(d)-8):])
			}
		})
	}
}

// TestOddNames: a server that lists a name twice keeps the first (with a
// warning that says so, not "give one of them a prefix"), and non-ASCII
// names that would all become underscores get distinct names.
func TestOddNames(t *testing.T) {
	logs := &syncBuffer{}
	gw, _ := hostileGateway(t, "dup", func(o *toolgate.Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) }, "")
	if gw.Config().Tools["same"] == nil || gw.Config().Tools["other"] == nil {
		t.Fatalf("tools: %v", gw.Config().Tools)
	}
	if !strings.Contains(logs.String(), `lists the tool \"same\" twice`) {
		t.Errorf("no warning about the repeated name:\n%s", logs.String())
	}
	gw, _ = hostileGateway(t, "unicode", nil, "")
	names := map[string]string{}
	for name, tool := range gw.Config().Tools {
		names[tool.Source.Name] = name
	}
	if len(names) != 4 || names["plain"] != "plain" {
		t.Fatalf("names: %v", names)
	}
	if names["café"] == names["cafè"] || !strings.HasPrefix(names["café"], "caf_") {
		t.Errorf("café is %s, cafè is %s", names["café"], names["cafè"])
	}
}

// TestListChangedStorm: 200 notifications/tools/list_changed in a burst
// make at most a few refreshes (at most one in flight, the rest coalesced
// into one more), not one tools/list each.
func TestListChangedStorm(t *testing.T) {
	refreshed := make(chan error, 256)
	gw, log := hostileGateway(t, "storm", func(o *toolgate.Options) {
		o.ToolsRefreshed = func(_ string, err error) { refreshed <- err }
	}, "")
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: types.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := gw.Call(context.Background(), run.ID, "storm", json.RawMessage(`{}`)); err != nil || !res.OK {
		t.Fatalf("storm: %v %+v", err, res)
	}
	waitRefreshed(t, refreshed)
	gw.Close() // waits for the refreshes; the server reads every request sent
	lists := logLines(t, log, "tools/list") - 1
	t.Logf("%d tools/list for 200 notifications", lists)
	if lists < 1 || lists > 3 {
		t.Errorf("%d tools/list for 200 notifications, want 1 to 3", lists)
	}
}

// TestStdinStuck: a stdio server that stops reading its stdin cannot hold
// a call past its read timeout: the write's outcome is unknown (part of it
// may have been read), and the server is started again.
func TestStdinStuck(t *testing.T) {
	refreshed := make(chan error, 8)
	gw, log := hostileGateway(t, "deaf", func(o *toolgate.Options) {
		o.ToolsRefreshed = func(_ string, err error) { refreshed <- err }
	}, "tools:\n  ok: {timeout: {read: 500ms}}\n")
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: types.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := json.Marshal(map[string]string{"blob": strings.Repeat("b", 1<<20)}) // past the pipe's buffer
	res, err := gw.Call(context.Background(), run.ID, "ok", big)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Code() != types.CodeTimeoutUnknownOutcome || res.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("ok=%v code=%s side_effect=%s: %s", res.OK, res.Code(), res.Meta.SideEffect, res.Observation)
	}
	select { // the restarted server's tools were listed
	case err := <-refreshed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // the stuck server gets 5s to exit before it is signalled
		t.Fatal("the server was not started again")
	}
	if n := logLines(t, log, "start"); n != 2 {
		t.Errorf("%d server starts, want 2", n)
	}
	if res, err := gw.Call(context.Background(), run.ID, "ok", json.RawMessage(`{}`)); err != nil || !res.OK {
		t.Fatalf("after the restart: %v %+v", err, res)
	}
}

// TestStderrCapped: a stdio server that writes 20 MiB to stderr passes
// at most 1 MiB on, and the log says the rest was dropped.
func TestStderrCapped(t *testing.T) {
	stderr, logs := &syncBuffer{}, &syncBuffer{}
	gw, _ := hostileGateway(t, "stderr", func(o *toolgate.Options) {
		o.MCPStderr = stderr
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}, "")
	gw.Close() // the server has written everything: it answered after
	if n := stderr.Len(); n > 1<<20 || n == 0 {
		t.Errorf("%d bytes of stderr passed on, want 1 to %d", n, 1<<20)
	}
	if !strings.Contains(logs.String(), "stderr limit") {
		t.Errorf("no warning about the dropped stderr:\n%s", logs.String())
	}
}
