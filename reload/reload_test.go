package reload_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// reloadBundle is a gateway on Go-function tools: echo (read); hold
// (write), which waits for the test and then fails without a clear outcome
// (an upstream error after delivery); and check, hold's verify read, which
// finds it done.
type reloadBundle struct {
	t       *testing.T
	gw      *toolgate.Gateway
	run     *toolgate.Run
	entered chan struct{}
	release chan struct{}
}

// reloadConfig declares echo and hold; hold's state update writes stateKey.
func (b *reloadBundle) config(stateKey string) *config.Config {
	return &config.Config{Tools: map[string]*config.Tool{
		"echo": {Description: "Answers its arguments.", Effect: types.EffectRead,
			Func: func(ctx context.Context, args json.RawMessage) (any, error) { return args, nil }},
		"hold": {Description: "Waits for the test.", Effect: types.EffectWrite,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			State:       map[string]string{stateKey: "args.n"},
			Verify:      &config.Lookup{Lookup: "check", Found: "result.found"},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				if !strings.Contains(string(args), "7") {
					return map[string]any{"done": true}, nil // only n 7 waits for the test
				}
				b.entered <- struct{}{}
				<-b.release
				return nil, &config.FuncError{Code: types.CodeUpstreamError, Message: "the answer was lost"}
			}},
		"check": {Description: "Finds hold's effect.", Effect: types.EffectRead,
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return map[string]any{"found": true}, nil
			}},
	}}
}

func setupReload(t *testing.T) *reloadBundle {
	t.Helper()
	b := &reloadBundle{t: t, entered: make(chan struct{}, 8), release: make(chan struct{})}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: b.config("n"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	b.gw = gw
	if b.run, err = gw.StartRun(context.Background(), toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "cust_42"}}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *reloadBundle) call(tool string, args any) *toolgate.Result {
	b.t.Helper()
	res, err := b.gw.Call(context.Background(), b.run.ID, tool, args)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// A call in flight during a reload finishes under the config it was
// admitted with: its tool and its verify read are gone from the new one,
// yet it is settled by that verify read and applies its state update;
// calls admitted after it see the new config.
func TestReloadCallInFlightKeepsItsConfig(t *testing.T) {
	b := setupReload(t)
	done := make(chan *toolgate.Result, 1)
	go func() {
		res, _ := b.gw.Call(context.Background(), b.run.ID, "hold", map[string]any{"n": 7})
		done <- res
	}()
	<-b.entered

	next := b.config("n")
	delete(next.Tools, "hold")
	delete(next.Tools, "check")
	out, err := b.gw.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if !out.OK || out.Version == out.Previous {
		t.Fatalf("reload outcome %+v", out)
	}
	if res := b.call("hold", map[string]any{"n": 8}); res.Code() != types.CodeUnknownTool {
		t.Errorf("a call admitted after the reload: %s, want unknown_tool", res.Code())
	}
	close(b.release)
	res := <-done
	if !res.OK || !res.Meta.Verified {
		t.Fatalf("the call in flight: %s verified=%v: %s", res.Code(), res.Meta.Verified, res.Observation)
	}
	run, err := b.gw.GetRun(context.Background(), b.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(run.State) != `{"n":7}` {
		t.Errorf("state %s: the call in flight did not apply its own config's update", run.State)
	}
	if info := b.gw.ConfigInfo(); info.Version != next.Version || info.Tools != 1 || info.LastReload == nil || !info.LastReload.OK {
		t.Errorf("config info %+v", info)
	}
}

// A config that does not normalize or compile is refused with every
// problem, and the old one stays live.
func TestReloadRefusesAnInvalidConfig(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(c *config.Config)
		want   []string // in the problems
	}{
		{"bad effect and body bound", func(c *config.Config) {
			c.Tools["echo"].Effect = "maybe"
			c.MaxBodyBytes = 10
		}, []string{"tools.echo.effect", "max_body_bytes"}},
		{"rule that does not compile", func(c *config.Config) {
			c.Tools["echo"].Rules = []config.Rule{{Deny: "args.n >", Message: "no"}}
		}, []string{"echo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setupReload(t)
			before := b.gw.ConfigInfo()
			next := b.config("m")
			tc.break_(next)
			out, err := b.gw.Reload(next)
			if err == nil {
				t.Fatal("an invalid config was accepted")
			}
			if out == nil || out.OK || out.Version != before.Version {
				t.Fatalf("outcome %+v", out)
			}
			all := strings.Join(out.Problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems lack %q:\n%s", w, all)
				}
			}
			info := b.gw.ConfigInfo()
			if info.Version != before.Version || !info.LoadedAt.Equal(before.LoadedAt) || info.LastReload == nil || info.LastReload.OK {
				t.Errorf("config info after a refused reload: %+v (before %+v)", info, before)
			}
			if res := b.call("echo", nil); !res.OK {
				t.Errorf("the old config no longer serves: %s", res.Code())
			}
		})
	}
}

// Keys set up once at the start keep their running values and are named
// as waiting for a restart; the rest of the file applies.
func TestReloadRestartOnlyKeys(t *testing.T) {
	b := setupReload(t)
	before := b.gw.Config()
	next := b.config("n")
	next.Store = "sqlite:other.db"
	next.Listen = "127.0.0.1:9999"
	next.Auth = config.Auth{Keys: []config.Key{{Name: "new", Key: "new-key-0123456789"}}}
	next.Tools["echo"].Description = "Answers its arguments (reloaded)."
	out, err := b.gw.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"listen", "store", "auth"}; !slices.Equal(out.NotApplied, want) {
		t.Errorf("not applied %v, want %v", out.NotApplied, want)
	}
	live := b.gw.Config()
	if live.Store != before.Store || live.Listen != before.Listen || len(live.Auth.Keys) != 0 {
		t.Errorf("restart-only keys changed while running: store %q listen %q keys %d", live.Store, live.Listen, len(live.Auth.Keys))
	}
	if live.Tools["echo"].Description != "Answers its arguments (reloaded)." {
		t.Errorf("the rest of the config was not applied")
	}
	if got := b.gw.ConfigInfo().RestartRequired; !slices.Equal(got, out.NotApplied) {
		t.Errorf("restart_required %v", got)
	}
	// Back to the running values: nothing waits for a restart any more.
	if out, err = b.gw.Reload(b.config("n")); err != nil || len(out.NotApplied) != 0 || len(b.gw.ConfigInfo().RestartRequired) != 0 {
		t.Errorf("after reverting: %+v %v %v", out, err, b.gw.ConfigInfo().RestartRequired)
	}
}

// A dependency the new config keeps keeps its breaker (open stays open);
// one whose base_url changed starts with a fresh breaker.
func TestReloadKeepsBreakersOfUnchangedDependencies(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cfgFor := func(base string) *config.Config {
		return &config.Config{
			Dependencies: map[string]*config.Dependency{"dead": {BaseURL: base, Breaker: config.Breaker{Threshold: 1}}},
			Tools: map[string]*config.Tool{"ping": {Description: "Pings.", Dependency: "dead", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/ping"}, Retry: config.Retry{MaxAttempts: 1}}},
		}
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfgFor(dead), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := gw.Call(context.Background(), run.ID, "ping", nil); res.OK {
		t.Fatal("a dead dependency answered")
	}
	state := func() string {
		for _, s := range gw.Breakers() {
			if s.Name == "dead" {
				return s.State.String()
			}
		}
		return "absent"
	}
	if got := state(); got != "open" {
		t.Fatalf("breaker %s after a failure with threshold 1", got)
	}
	next := cfgFor(dead)
	next.Tools["ping"].Description = "Pings (reloaded)."
	if _, err := gw.Reload(next); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "open" {
		t.Errorf("breaker %s after a reload that kept the dependency, want open", got)
	}
	if res, _ := gw.Call(context.Background(), run.ID, "ping", nil); res.Code() != types.CodeCircuitOpen {
		t.Errorf("call after reload: %s, want circuit_open", res.Code())
	}
	if _, err := gw.Reload(cfgFor(dead + "/v2")); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "absent" {
		t.Errorf("breaker %s after the dependency's base_url changed, want a fresh one", got)
	}
}
