package mcpcall_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

// TestImport: every fixture tool comes in with its description, its schema
// and the effect of its annotations; the tools: entries override keys.
func TestImport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			b := setup(t, tr)
			cfg := b.gw.Config()
			want := map[string]types.Effect{
				"echo": types.EffectRead, "pay": types.EffectWrite, "fail": types.EffectRead,
				"slow_read": types.EffectRead, "slow_write": types.EffectWrite, "counts": types.EffectRead,
				"crash": types.EffectWrite, "toggle_extra": types.EffectIdempotent,
			}
			for name, effect := range want {
				tool := cfg.Tools[name]
				if tool == nil {
					t.Errorf("%s not imported; have %v", name, cfg.ToolNames())
					continue
				}
				if tool.Effect != effect {
					t.Errorf("%s: effect %s, want %s", name, tool.Effect, effect)
				}
				if tool.Source == nil || tool.Source.Kind != "mcp" || tool.Source.Dependency != "fx" {
					t.Errorf("%s: source %+v", name, tool.Source)
				}
			}
			if got := cfg.Tools["slow_read"].Timeout.Read.D(); got != time.Second {
				t.Errorf("override of slow_read's read timeout: %s", got)
			}
			if req := cfg.Tools["pay"].InputSchema["required"]; !slices.Equal(toStrings(req), []string{"order_id", "amount"}) {
				t.Errorf("pay's imported schema: required %v", req)
			}
		})
	}
}

// TestCalls covers one call of each kind through the seven stages.
func TestCalls(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			b := setup(t, tr)

			// Validation refuses before anything is sent.
			res := b.call(t, "pay", `{"order_id": "ORD-1", "amount": "a lot"}`)
			if res.Code() != types.CodeWrongType {
				t.Errorf("pay with a string amount: %s (%s)", res.Code(), res.Observation)
			}
			res = b.call(t, "pay", `{"order_id": "ORD-1"}`)
			if res.Code() != types.CodeMissingArguments {
				t.Errorf("pay without amount: %s", res.Code())
			}
			if c := b.counts(t); c.Pay != 0 {
				t.Fatalf("a refused call reached the server: %d pay calls", c.Pay)
			}

			// Structured content is the data, numbers exact.
			res = b.call(t, "echo", `{"text": "hi", "amount": 9007199254740993}`)
			if !res.OK || string(res.Data) != `{"amount":9007199254740993,"text":"hi"}` {
				t.Errorf("echo: ok=%v data=%s (%s)", res.OK, res.Data, res.Observation)
			}

			// isError is rejected, with the server's text.
			res = b.call(t, "fail", `{}`)
			if res.Code() != types.CodeRejected || !strings.Contains(res.Error.Message, "ORD-1 is closed") {
				t.Errorf("fail: %s %q", res.Code(), res.Observation)
			}
			if res.Meta.Attempts != 1 {
				t.Errorf("a rejected call is not retried: %d attempts", res.Meta.Attempts)
			}

			// A write: done once, its key in _meta, its repeat replayed.
			first := b.call(t, "pay", `{"order_id": "ORD-1", "amount": 425000}`)
			if !first.OK || !strings.Contains(string(first.Data), `"amount":425000`) {
				t.Fatalf("pay: %s %s", first.Code(), first.Observation)
			}
			again := b.call(t, "pay", `{"order_id": "ORD-1", "amount": 425000}`)
			if !again.OK || !again.Meta.Replayed || string(again.Data) != string(first.Data) {
				t.Errorf("repeat: ok=%v replayed=%v data=%s", again.OK, again.Meta.Replayed, again.Data)
			}
			c := b.counts(t)
			if c.Pay != 1 {
				t.Errorf("the server was paid %d times, want 1", c.Pay)
			}
			if len(c.Keys) != 1 || c.Keys[0] != "pay:ORD-1:425000:cust_42" {
				t.Errorf("operation keys in _meta: %q", c.Keys)
			}
		})
	}
}

// TestReadRetriedOnTimeout: a read with no answer within its read timeout
// is cancelled (notifications/cancelled reaches the server) and retried.
func TestReadRetriedOnTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			b := setup(t, tr)
			res := b.call(t, "slow_read", `{}`)
			if !res.OK || res.Meta.Attempts != 2 || string(res.Data) != `{"fresh":true}` {
				t.Fatalf("slow_read: ok=%v attempts=%d data=%s (%s)", res.OK, res.Meta.Attempts, res.Data, res.Observation)
			}
			if b.fx != nil {
				waitCancelled(t, b.fx.Cancelled, "slow_read")
			}
			if c := b.counts(t); c.SlowRead != 2 {
				t.Errorf("slow_read reached the server %d times, want 2", c.SlowRead)
			}
		})
	}
}

// TestWriteNotResentOnTimeout: a write with no answer in time may have
// happened: it is sent once, cancelled, and answered unknown.
func TestWriteNotResentOnTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			b := setup(t, tr)
			res := b.call(t, "slow_write", `{}`)
			if res.Code() != types.CodeTimeoutUnknownOutcome || res.Meta.Attempts != 1 || res.Meta.SideEffect != types.SideEffectUnknown {
				t.Fatalf("slow_write: %s attempts=%d side_effect=%s (%s)", res.Code(), res.Meta.Attempts, res.Meta.SideEffect, res.Observation)
			}
			if b.fx != nil {
				waitCancelled(t, b.fx.Cancelled, "slow_write")
			}
			// The model's repeat is not sent either: the outcome is unknown.
			again := b.call(t, "slow_write", `{}`)
			if again.OK || again.Meta.Attempts != 0 {
				t.Errorf("repeat of an unknown write: ok=%v attempts=%d (%s)", again.OK, again.Meta.Attempts, again.Observation)
			}
			if c := b.counts(t); c.SlowWrite != 1 {
				t.Errorf("slow_write reached the server %d times, want 1", c.SlowWrite)
			}
		})
	}
}

// TestHonouredKeyResendsWrite: a server said to dedupe by the operation key
// in _meta (idempotency.header set) gets a timed-out write again, with the
// same key.
func TestHonouredKeyResendsWrite(t *testing.T) {
	b := setup(t, transports[0], "  slow_write:\n", "  slow_write:\n    idempotency: {key: \"w:{principal.id}\", header: _meta}\n")
	res := b.call(t, "slow_write", `{}`)
	if res.Meta.Attempts != 3 {
		t.Errorf("slow_write with an honoured key: %d attempts, want 3 (%s)", res.Meta.Attempts, res.Observation)
	}
	if c := b.fx.Counts(); c.SlowWrite != 3 {
		t.Errorf("slow_write reached the server %d times, want 3", c.SlowWrite)
	}
}

// TestConnectFailureIsNotDelivered: once the server is gone, a call is
// never written, which proves non-delivery: even a write is tried again
// (safe) and ends connect_failed with nothing done.
func TestConnectFailureIsNotDelivered(t *testing.T) {
	var srv *httptest.Server
	gone := transport{"http", func(t testing.TB) (string, *mcptest.Fixture) {
		fx := mcptest.New()
		// No keep-alive: a POST then always dials, so that a server that is
		// gone is a refused connection, not a pooled one that breaks after
		// the request was written (an unknown outcome, rightly).
		srv = httptest.NewUnstartedServer(fx.Handler())
		srv.Config.SetKeepAlivesEnabled(false)
		srv.Start()
		t.Cleanup(func() { fx.CloseSessions(); srv.Close() })
		return "{url: " + strconv.Quote(srv.URL) + "}", fx
	}}
	b := setup(t, gone, "breaker: {threshold: 50, cooldown: 1s}", "breaker: {threshold: 3, cooldown: 1h}")
	srv.Listener.Close()
	srv.CloseClientConnections()
	res := b.call(t, "pay", `{"order_id": "ORD-1", "amount": 100}`)
	if res.Code() != types.CodeConnectFailed || res.Meta.SideEffect != types.SideEffectNone || res.Meta.Attempts < 2 {
		t.Fatalf("pay to a server that is gone: %s side_effect=%s attempts=%d (%s)", res.Code(), res.Meta.SideEffect, res.Meta.Attempts, res.Observation)
	}
	if c := b.fx.Counts(); c.Pay != 0 {
		t.Errorf("pay reached the server %d times", c.Pay)
	}
	// Three failed attempts opened the server's one breaker: every tool of
	// the server is now refused at once, nothing tried.
	res = b.call(t, "echo", `{"text": "x"}`)
	if res.Code() != types.CodeCircuitOpen || res.Meta.Attempts != 0 || !strings.Contains(res.Error.Message, "fx") {
		t.Errorf("echo after the breaker opened: %s attempts=%d (%s)", res.Code(), res.Meta.Attempts, res.Observation)
	}
}

// TestOwnerAndVerifyThroughMCP: the ownership lookup is a tool of the same
// MCP server, judged before anything is sent.
func TestOwnerAndVerifyThroughMCP(t *testing.T) {
	b := setup(t, transports[0], "  pay:\n", `  pay:
    owner: {lookup: echo, args: {text: "args.order_id"}, expect: "result.text == 'ORD-1'"}
`)
	if res := b.call(t, "pay", `{"order_id": "ORD-2", "amount": 5}`); res.Code() != types.CodeNotOwner {
		t.Errorf("pay of another's order: %s (%s)", res.Code(), res.Observation)
	}
	if res := b.call(t, "pay", `{"order_id": "ORD-1", "amount": 5}`); !res.OK {
		t.Errorf("pay of one's own order: %s", res.Observation)
	}
	if c := b.fx.Counts(); c.Pay != 1 {
		t.Errorf("pay reached the server %d times, want 1", c.Pay)
	}
}

// waitCancelled waits for the fixture to report that tool's call was
// cancelled by the client; the bound only keeps a broken test from hanging.
func waitCancelled(t *testing.T, ch <-chan string, tool string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != tool {
			t.Errorf("cancelled %s, want %s", got, tool)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the server never saw notifications/cancelled for %s", tool)
	}
}

func toStrings(v any) []string {
	var out []string
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &out)
	return out
}
