package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// gatedRefunds is a Go-function refund tool that stops inside every call
// until the test lets it go: entered hears of each call, release lets one
// finish.
type gatedRefunds struct {
	entered chan string
	release chan struct{}
	made    atomic.Int64 // paise refunded
}

func newGatedRefunds() *gatedRefunds {
	return &gatedRefunds{entered: make(chan string, 64), release: make(chan struct{})}
}

func (g *gatedRefunds) fn(ctx context.Context, args json.RawMessage) (any, error) {
	var a struct {
		OrderID     string `json:"order_id"`
		AmountPaise int64  `json:"amount_paise"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	g.entered <- a.OrderID
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.made.Add(a.AmountPaise)
	return map[string]any{"refund_id": "rf_" + a.OrderID, "amount_paise": a.AmountPaise}, nil
}

// limitConfig is one refund tool under the cumulative state rule.
func limitConfig(fn config.Func, mutate func(*config.Tool)) *config.Config {
	t := &config.Tool{
		Description: "Refund an order.",
		Effect:      types.EffectWrite,
		InputSchema: map[string]any{"type": "object", "required": []any{"order_id", "amount_paise"},
			"properties":           map[string]any{"order_id": map[string]any{"type": "string"}, "amount_paise": map[string]any{"type": "integer"}},
			"additionalProperties": false},
		Rules: []config.Rule{{Deny: "(has(state.refunded_paise) ? state.refunded_paise : 0) + args.amount_paise > 500000",
			Code: "over_limit", Message: "The run may refund at most 500000 paise in all."}},
		State: map[string]string{"refunded_paise": "(has(state.refunded_paise) ? state.refunded_paise : 0) + args.amount_paise"},
		Retry: config.Retry{MaxAttempts: 1},
		Func:  fn,
	}
	if mutate != nil {
		mutate(t)
	}
	return &config.Config{Tools: map[string]*config.Tool{"issue_refund": t}}
}

func openLimitGateway(t *testing.T, cfg *config.Config, st store.Store, clk clock.Clock) *toolgate.Gateway {
	t.Helper()
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: st, Clock: clk,
		Rand: clock.FixedRand(0.5), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

func limitStores(t *testing.T, clk clock.Clock) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memory.NewWithClock(clk.Now) },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), sqlite.Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestParallelRefundsHoldTheStateRule is the case: the first
// refund is inside the provider when four more arrive, all judged against
// the state before it. Without the state-writer slot every one is sent.
func TestParallelRefundsHoldTheStateRule(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for name, open := range limitStores(t, clk) {
		t.Run(name, func(t *testing.T) {
			g := newGatedRefunds()
			gw := openLimitGateway(t, limitConfig(g.fn, nil), open(t), clk)
			run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
			if err != nil {
				t.Fatal(err)
			}
			results := make([]*types.Result, 5)
			var wg sync.WaitGroup
			call := func(i int) {
				defer wg.Done()
				res, err := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": fmt.Sprintf("ORD-%d", i), "amount_paise": 200000})
				if err != nil {
					t.Error(err)
				}
				results[i] = res
			}
			wg.Add(1)
			go call(0)
			<-g.entered // the first refund is at the provider, the state still 0
			for i := 1; i < 5; i++ {
				wg.Add(1)
				go call(i)
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			// Let every refund that reaches the provider finish.
			g.release <- struct{}{}
			for open := true; open; {
				select {
				case <-g.entered:
					g.release <- struct{}{}
				case <-done:
					open = false
				}
			}
			made, refused := 0, 0
			for i, res := range results {
				switch {
				case res == nil:
				case res.OK:
					made++
				case res.Code() == "over_limit":
					refused++
					if res.Meta.SideEffect != types.SideEffectNone {
						t.Errorf("refusal %d: side effect %s", i, res.Meta.SideEffect)
					}
				default:
					t.Errorf("call %d: %s: %s", i, res.Code(), res.Observation)
				}
			}
			if made != 2 || refused != 3 || g.made.Load() != 400000 {
				t.Fatalf("made %d (provider %d paise), refused %d; want 2 made (400000) and 3 over_limit", made, g.made.Load(), refused)
			}
			got, _ := gw.GetRun(context.Background(), run.ID)
			if !strings.Contains(string(got.State), `"refunded_paise":400000`) {
				t.Errorf("state %s, want refunded_paise 400000 (the provider's sum)", got.State)
			}
			if rep, err := gw.Replay(context.Background(), run.ID); err != nil || !rep.Matches {
				t.Errorf("replay: %+v %v", rep, err)
			}
			if ws, _ := gw.Store().StateWriters(context.Background(), run.ID); len(ws) != 0 {
				t.Errorf("the slot is still held after every call: %+v", ws)
			}
		})
	}
}

// TestStateWriterWaitEndsInRunBusy: a call that cannot get the slot within
// its deadline less one attempt's time (but at least one attempt's time)
// answers run_busy, having done nothing.
func TestStateWriterWaitEndsInRunBusy(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	g := newGatedRefunds()
	cfg := limitConfig(g.fn, func(t *config.Tool) {
		// The second call waits for the slot for what its deadline leaves
		// after one attempt (connect + read), but at least one attempt's
		// time: here 2 s. The first call, held at the dependency until the
		// second has answered, has 4 s, so a loaded machine leaves it 2 s
		// to spare (it had 20 ms, and timed out under load).
		t.Timeout = config.Timeout{Connect: config.Duration(time.Second), Read: config.Duration(time.Second),
			Total: config.Duration(4 * time.Second)}
	})
	gw := openLimitGateway(t, cfg, memory.NewWithClock(clk.Now), clk)
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan *types.Result, 1)
	go func() {
		res, _ := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": 100})
		first <- res
	}()
	<-g.entered
	res, err := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": "ORD-2", "amount_paise": 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code() != types.CodeRunBusy || res.Meta.Next != types.NextWait || res.Meta.RetryAfterMS <= 0 ||
		res.Meta.SideEffect != types.SideEffectNone || !res.Error.Retryable || res.Meta.Step == 0 {
		t.Fatalf("second call: %s next %s after %d ms, side effect %s, step %d: %s", res.Code(), res.Meta.Next, res.Meta.RetryAfterMS, res.Meta.SideEffect, res.Meta.Step, res.Observation)
	}
	g.release <- struct{}{}
	if res := <-first; !res.OK {
		t.Fatalf("first call: %s", res.Observation)
	}
	// Once the slot is free the same call goes through.
	go func() { g.release <- struct{}{} }()
	if res, _ := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": "ORD-2", "amount_paise": 100}); !res.OK {
		t.Fatalf("repeat: %s", res.Observation)
	}
}

// TestStatelessCallsSkipTheSlot: a write whose rules do not read state and
// which changes none runs beside a state writer of the same run.
func TestStatelessCallsSkipTheSlot(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	g := newGatedRefunds()
	cfg := limitConfig(g.fn, nil)
	cfg.Tools["note"] = &config.Tool{Description: "Write a note.", Effect: types.EffectWrite,
		Rules:       []config.Rule{{Deny: "args.text == ''", Code: "empty", Message: "Write something."}},
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Func:        func(ctx context.Context, args json.RawMessage) (any, error) { return "noted", nil }}
	gw := openLimitGateway(t, cfg, memory.NewWithClock(clk.Now), clk)
	run, _ := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
	first := make(chan *types.Result, 1)
	go func() {
		res, _ := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": 100})
		first <- res
	}()
	<-g.entered
	// The refund holds the slot; the note does not wait for it.
	if res, _ := gw.Call(context.Background(), run.ID, "note", map[string]any{"text": "hello"}); !res.OK {
		t.Fatalf("note: %s", res.Observation)
	}
	g.release <- struct{}{}
	if res := <-first; !res.OK {
		t.Fatalf("refund: %s", res.Observation)
	}
}

// TestUpdatersShareTheSlot: calls that only update the state (their rules
// never read it) run together; a call judged against the state waits for
// them and sees both updates.
func TestUpdatersShareTheSlot(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	g := newGatedRefunds()
	cfg := limitConfig(g.fn, func(t *config.Tool) {
		t.Rules = nil // updates refunded_paise, reads nothing
		t.Timeout = config.Timeout{Connect: config.Duration(time.Second), Read: config.Duration(2 * time.Second)}
	})
	cfg.Tools["judged_refund"] = limitConfig(func(ctx context.Context, args json.RawMessage) (any, error) {
		return map[string]any{"refund_id": "rf_j"}, nil
	}, nil).Tools["issue_refund"]
	gw := openLimitGateway(t, cfg, memory.NewWithClock(clk.Now), clk)
	if c, _ := compiledTool(t, gw, "issue_refund"); !c.StateWriter || c.StateReader {
		t.Fatalf("issue_refund without rules: writer %v reader %v", c.StateWriter, c.StateReader)
	}
	run, _ := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
	done := make(chan *types.Result, 2)
	for i := range 2 {
		go func() {
			res, _ := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": fmt.Sprintf("ORD-%d", i), "amount_paise": 250000})
			done <- res
		}()
	}
	// Both are at the provider at once: they share the slot.
	for range 2 {
		select {
		case <-g.entered:
		case <-time.After(time.Minute):
			t.Fatal("the second updater did not run beside the first")
		}
	}
	if len(done) > 0 {
		t.Fatalf("an updater ended before the second entered: they ran one after the other (%s)", (<-done).Observation)
	}
	judged := make(chan *types.Result, 1)
	go func() {
		res, _ := gw.Call(context.Background(), run.ID, "judged_refund", map[string]any{"order_id": "ORD-9", "amount_paise": 1})
		judged <- res
	}()
	g.release <- struct{}{}
	g.release <- struct{}{}
	for range 2 {
		if res := <-done; !res.OK {
			t.Fatalf("updater: %s", res.Observation)
		}
	}
	if res := <-judged; res.Code() != "over_limit" {
		t.Fatalf("judged call: %s, want over_limit against the state both updates left: %s", res.Code(), res.Observation)
	}
}

// TestJudgedAgainUnderTheSlot: a call judged against a run read before
// another call committed is judged again once it holds the slot; refused
// then, the operation it had begun is deleted (and its quota released),
// and nothing is sent.
func TestJudgedAgainUnderTheSlot(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for name, open := range limitStores(t, clk) {
		t.Run(name, func(t *testing.T) {
			var sent atomic.Int64
			fn := func(ctx context.Context, args json.RawMessage) (any, error) {
				sent.Add(1)
				return map[string]any{"refund_id": "rf"}, nil
			}
			cfg := limitConfig(fn, func(t *config.Tool) {
				t.Quotas = []config.Quota{{Name: "per_customer", Limit: 10, Window: config.Duration(time.Hour)}}
			})
			gw := openLimitGateway(t, cfg, open(t), clk)
			run, _ := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
			stale, err := gw.Store().GetRun(context.Background(), run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := gw.Call(context.Background(), run.ID, "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": 400000}); !res.OK {
				t.Fatalf("first: %s", res.Observation)
			}
			// Judged against the stale run (refunded 0), 200000 passes; under
			// the slot, against 400000, it does not.
			call := &types.Call{RunID: run.ID, Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-2","amount_paise":200000}`), CallID: "c2"}
			res, err := gw.DoRun(context.Background(), call, stale)
			if err != nil {
				t.Fatal(err)
			}
			if res.Code() != "over_limit" || res.Meta.SideEffect != types.SideEffectNone || sent.Load() != 1 {
				t.Fatalf("second: %s side effect %s, %d sent; want over_limit, none, 1 sent: %s", res.Code(), res.Meta.SideEffect, sent.Load(), res.Observation)
			}
			if key := res.Meta.IdempotencyKey; key == "" {
				t.Error("the refusal names no operation key")
			} else if _, err := gw.Store().GetOperation(context.Background(), key); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused call's operation is still in the ledger: %v", err)
			}
			uses, _ := gw.QuotaUsage(context.Background())
			if len(uses) != 1 || uses[0].Used != 1 {
				t.Errorf("quota use %+v, want 1 (the refused call's released)", uses)
			}
		})
	}
}

// compiledTool compiles the gateway's live config again, as the pipeline
// does, and returns the named tool: its StateWriter and StateReader say
// which slot the pipeline gives it.
func compiledTool(t *testing.T, gw *toolgate.Gateway, name string) (*validate.Compiled, bool) {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	v, err := validate.Compile(gw.Config(), env)
	if err != nil {
		t.Fatal(err)
	}
	return v.Tool(name)
}
