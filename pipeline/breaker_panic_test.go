package pipeline_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/types"
)

// scripted is an executor whose attempts do, in turn, what its script says:
// "fail" (a transient connect failure), "panic" (a bug in the executor) or
// "ok".
type scripted struct {
	mu     sync.Mutex
	script []string
}

func (s *scripted) Do(_ context.Context, a *execute.Attempt) (*execute.Response, *execute.Failure) {
	s.mu.Lock()
	step := s.script[0]
	s.script = s.script[1:]
	s.mu.Unlock()
	switch step {
	case "fail":
		return nil, &execute.Failure{Kind: execute.KindConnectFailed, Transient: true, Code: types.CodeConnectFailed, Message: "connection refused"}
	case "panic":
		panic("executor bug")
	}
	return &execute.Response{Status: 200, Data: json.RawMessage(`{"ok":true}`)}, nil
}

// TestBreakerPanickingProbe: a half-open breaker's probe whose executor
// panics gives its ticket back (as a failure), so after the next cooldown
// the breaker admits another probe instead of refusing for ever.
func TestBreakerPanickingProbe(t *testing.T) {
	const cooldown = 10 * time.Second
	exec := &scripted{script: []string{"fail", "panic", "ok"}}
	cfg := &config.Config{
		Store: "memory",
		Dependencies: map[string]*config.Dependency{"svc": {BaseURL: "http://127.0.0.1:1", // never dialled: the executor is scripted

			Breaker: config.Breaker{Threshold: 1, Cooldown: config.Duration(cooldown)}}},
		Tools: map[string]*config.Tool{"ping": {Description: "Ping.", Dependency: "svc", Effect: types.EffectRead,
			Retry: config.Retry{MaxAttempts: 1},
			Func:  func(context.Context, json.RawMessage) (any, error) { return nil, nil }}},
	}
	clk := clock.NewFake(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Clock: clk, Executor: exec,
		Rand: clock.FixedRand(0.5), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	call := func() *types.Result {
		t.Helper()
		res, err := gw.Call(context.Background(), run.ID, "ping", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	if res := call(); res.Code() != types.CodeConnectFailed {
		t.Fatalf("first call = %s, want connect_failed (it opens the breaker)", res.Code())
	}
	if res := call(); res.Code() != types.CodeCircuitOpen {
		t.Fatalf("second call = %s, want circuit_open", res.Code())
	}
	clk.Advance(cooldown)
	if res := call(); res.OK || res.Code() != types.CodeInternalError {
		t.Fatalf("probe = %+v, want the panic's internal_error", res)
	}
	clk.Advance(cooldown)
	if res := call(); !res.OK {
		t.Fatalf("after the panicking probe and a cooldown = %+v, want the next probe admitted and ok", res.Error)
	}
}
