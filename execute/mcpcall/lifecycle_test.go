package mcpcall_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

// TestStdioRestartSurvived: the subprocess dies in the middle of a call;
// that call's outcome is unknown (it is a write), and the next call runs
// on a new process.
func TestStdioRestartSurvived(t *testing.T) {
	b := setup(t, transports[1])
	before := b.counts(t).PID
	res := b.call(t, "crash", `{}`)
	if res.OK || res.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("crash: ok=%v side_effect=%s (%s)", res.OK, res.Meta.SideEffect, res.Observation)
	}
	after := b.counts(t).PID
	if after == before || after == 0 {
		t.Fatalf("pid before %d, after %d: want a new process", before, after)
	}
	first := b.call(t, "pay", `{"order_id": "ORD-9", "amount": 7}`)
	if !first.OK {
		t.Fatalf("pay on the restarted server: %s", first.Observation)
	}
}

// TestToolListChanged: notifications/tools/list_changed brings a new tool
// in, and a tool that disappears answers unknown_tool.
func TestToolListChanged(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			refreshed := make(chan error, 8)
			b := setupWith(t, tr, func(o *toolgate.Options) {
				o.ToolsRefreshed = func(_ string, err error) { refreshed <- err }
			})
			if res := b.call(t, "extra", `{}`); res.Code() != types.CodeUnknownTool {
				t.Fatalf("extra before it exists: %s", res.Code())
			}
			if res := b.call(t, "toggle_extra", `{}`); !res.OK {
				t.Fatalf("toggle_extra: %s", res.Observation)
			}
			waitRefreshed(t, refreshed)
			if res := b.call(t, "extra", `{}`); !res.OK || string(res.Data) != `{"extra":true}` {
				t.Fatalf("extra once listed: %s %s", res.Code(), res.Observation)
			}
			if b.gw.Config().Tools["extra"].Effect != types.EffectRead {
				t.Errorf("extra's effect: %s", b.gw.Config().Tools["extra"].Effect)
			}
			if res := b.call(t, "toggle_extra", `{}`); !res.OK {
				t.Fatalf("toggle_extra: %s", res.Observation)
			}
			waitRefreshed(t, refreshed)
			if res := b.call(t, "extra", `{}`); res.Code() != types.CodeUnknownTool {
				t.Errorf("extra after it was removed: %s (%s)", res.Code(), res.Observation)
			}
		})
	}
}

// waitRefreshed waits for one refresh to be merged; the bound only keeps a
// broken test from hanging.
func waitRefreshed(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no refresh after notifications/tools/list_changed")
	}
}

// TestHTTPServerRestartSurvived: an HTTP server that restarted no longer
// knows toolgate's session and answers 404. A write whose tools/call was
// written before that 404 has an unknown outcome (issue 27 #15: the 404
// proves nothing about what was done), and is not sent again; the next call
// goes through on a new session.
func TestHTTPServerRestartSurvived(t *testing.T) {
	first := mcptest.New()
	var current atomic.Pointer[mcptest.Fixture]
	current.Store(first)
	handlers := map[*mcptest.Fixture]http.Handler{first: first.Handler()}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handlers[current.Load()]
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	restarted := mcptest.New()
	t.Cleanup(func() { first.CloseSessions(); restarted.CloseSessions(); srv.Close() })
	tr := transport{"http", func(testing.TB) (string, *mcptest.Fixture) { return "{url: " + strconv.Quote(srv.URL) + "}", nil }}
	b := setup(t, tr)
	if res := b.call(t, "echo", `{"text": "before"}`); !res.OK {
		t.Fatalf("echo: %s", res.Observation)
	}
	mu.Lock()
	handlers[restarted] = restarted.Handler()
	mu.Unlock()
	current.Store(restarted)
	res := b.call(t, "pay", `{"order_id": "ORD-5", "amount": 10}`)
	if res.OK || res.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("pay answered 404 after it was written: %s, side_effect %s (%s); want an unknown outcome", res.Code(), res.Meta.SideEffect, res.Observation)
	}
	if c := restarted.Counts(); c.Pay != 0 {
		t.Errorf("the restarted server was paid %d times, want 0 (the write is not sent again)", c.Pay)
	}
	if res := b.call(t, "echo", `{"text": "after"}`); !res.OK {
		t.Fatalf("echo on a new session after the restart: %s", res.Observation)
	}
}

// TestStdioServerStoppedOnClose: closing the gateway stops the subprocess
// (and reaps it): no process is left behind.
func TestStdioServerStoppedOnClose(t *testing.T) {
	b := setup(t, transports[1])
	pid := b.counts(t).PID
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the server process %d is not running: %v", pid, err)
	}
	if err := b.gw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Close, process %d: %v, want no such process", pid, err)
	}
}
