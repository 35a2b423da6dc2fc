package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// Every refusal of the validate stage, through the whole pipeline, and the
// order of the checks: a call with several problems is refused for the
// cheapest, and nothing reaches the ownership lookup (counted at the
// provider) unless every earlier check passed.
func TestValidationOrderAndCodes(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		args   string
		want   types.Code
		says   []string
		reads  int // ownership lookups that reached the provider
		caller *toolgate.Principal
	}{
		{"unknown tool", "issue_refnd", `{"order_id":"ORD-4471","amount_paise":1}`, types.CodeUnknownTool, []string{"issue_refund", "get_order"}, 0, nil},
		{"missing beats everything after it", "issue_refund", `{"force":true,"reason":5}`, types.CodeMissingArguments, []string{"order_id", "amount_paise"}, 0, nil},
		{"hallucinated argument", "issue_refund", `{"order_id":"ORD-4471","amount_paise":100,"force":true}`, types.CodeUnknownArguments, []string{"force"}, 0, nil},
		{"wrong type", "issue_refund", `{"order_id":"ORD-4471","amount_paise":"100"}`, types.CodeWrongType, []string{"amount_paise", "integer"}, 0, nil},
		{"typo in the order id", "issue_refund", `{"order_id":"ORD-44X1","amount_paise":100}`, types.CodeInvalidArgument, []string{"order_id"}, 0, nil},
		{"range", "issue_refund", `{"order_id":"ORD-4471","amount_paise":0}`, types.CodeInvalidArgument, []string{"amount_paise"}, 0, nil},
		{"permission", "issue_refund", `{"order_id":"ORD-4471","amount_paise":100}`, types.CodeForbidden, []string{"refunds:write"}, 0,
			&toolgate.Principal{ID: "cust_42", Limits: map[string]json.Number{"max_refund_paise": "500000"}}},
		{"business rule", "issue_refund", `{"order_id":"ORD-4471","amount_paise":800000}`, "over_limit", []string{"800000", "500000"}, 0, nil},
		{"ownership, last", "issue_refund", `{"order_id":"ORD-9999","amount_paise":100}`, types.CodeNotOwner, []string{"ORD-9999"}, 1, nil},
		{"args not an object", "issue_refund", `[1,2]`, types.CodeWrongType, []string{"object"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOpts{principal: tt.caller})
			res := b.call(tt.tool, json.RawMessage(tt.args))
			if res.OK || res.Error.Code != tt.want {
				t.Fatalf("code = %v, want %s (%s)", res.Code(), tt.want, res.Observation)
			}
			for _, s := range tt.says {
				if !strings.Contains(res.Error.Message, s) {
					t.Errorf("message lacks %q: %s", s, res.Error.Message)
				}
			}
			if got := b.payments.Counts().Reads; got != tt.reads {
				t.Errorf("ownership lookups = %d, want %d", got, tt.reads)
			}
			if c := b.payments.Counts(); c.Requests != 0 {
				t.Errorf("a refused call reached the provider: %+v", c)
			}
			if res.Meta.SideEffect != types.SideEffectNone || res.Error.Retryable {
				t.Errorf("side_effect=%s retryable=%v", res.Meta.SideEffect, res.Error.Retryable)
			}
			rows, _ := b.gw.History(context.Background(), b.run.ID)
			if len(rows) != 1 || rows[0].Code != tt.want {
				t.Errorf("want one execution row with code %s, got %+v", tt.want, rows)
			}
		})
	}
}

func TestRefundSucceedsAndUpdatesState(t *testing.T) {
	b := setup(t, setupOpts{honourKeys: true})
	res := b.call("issue_refund", refundArgs(425000))
	if !res.OK {
		t.Fatalf("refund failed: %s", res.Observation)
	}
	if res.Meta.SideEffect != types.SideEffectCommitted || res.Meta.Next != types.NextContinue || res.Meta.Step != 1 {
		t.Errorf("meta = %+v", res.Meta)
	}
	if res.Meta.IdempotencyKey != "refund:ORD-4471:425000:"+b.run.ID {
		t.Errorf("operation key = %q", res.Meta.IdempotencyKey)
	}
	run, _ := b.gw.GetRun(context.Background(), b.run.ID)
	var st map[string]any
	json.Unmarshal(run.State, &st)
	if st["refund_id"] != "RF-99203" || fmt.Sprint(st["refunded_paise"]) != "425000" {
		t.Errorf("state = %s", run.State)
	}
	rep, err := b.gw.Replay(context.Background(), b.run.ID)
	if err != nil || !rep.Matches {
		t.Fatalf("replay = %+v, %v", rep, err)
	}
}

// The refund incident, through toolgate: the provider is slower than the
// read timeout. With an honoured key the retry is safe and the provider
// makes one refund; without one, toolgate does not retry and settles the
// outcome with the verify read.
func TestSlowProviderRefundsOnce(t *testing.T) {
	for _, honour := range []bool{true, false} {
		t.Run(fmt.Sprintf("honour_keys=%v", honour), func(t *testing.T) {
			release := make(chan struct{})
			b := setup(t, setupOpts{honourKeys: honour, speed: 50})
			b.payments.Hold = func(n int) <-chan struct{} {
				if n == 0 {
					return release
				}
				return nil
			}
			first := b.call("issue_refund", refundArgs(425000))
			if honour {
				// The attempt timed out; the retry carried the same key; the
				// provider answered the retry once the first finished.
				if first.OK {
					t.Fatal("the first attempt should still be held")
				}
			}
			close(release)
			if !honour {
				if first.Code() != types.CodeUnknownOutcome || first.Meta.Next != types.NextVerify || first.Meta.VerifyWith != "list_refunds" {
					t.Fatalf("want unknown_outcome with verify advice, got %s: %s", first.Code(), first.Observation)
				}
				if first.Meta.SideEffect != types.SideEffectUnknown || first.Error.Retryable {
					t.Errorf("side_effect=%s retryable=%v", first.Meta.SideEffect, first.Error.Retryable)
				}
				if !strings.Contains(first.Observation, "MAY") && !strings.Contains(first.Observation, "may") {
					t.Errorf("observation does not warn: %s", first.Observation)
				}
			}
			// Wait until the provider has made the held refund.
			waitFor(t, func() bool { return b.payments.Counts().Refunds >= 1 })
			second := b.call("issue_refund", refundArgs(425000))
			if !second.OK {
				t.Fatalf("repeat: %s: %s", second.Code(), second.Observation)
			}
			if !honour && !second.Meta.Verified {
				t.Errorf("want verified, got %+v", second.Meta)
			}
			if c := b.payments.Counts(); c.Refunds != 1 {
				t.Fatalf("provider made %d refunds, want 1 (%+v)", c.Refunds, c)
			}
		})
	}
}

// waitFor polls a condition that an outside server (not this process's
// code) makes true.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDedupeUnderConcurrency(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, setupOpts{})
	var arrived atomic.Int32
	b.payments.Hold = func(n int) <-chan struct{} {
		arrived.Add(1)
		return release
	}
	const n = 50
	results := make([]*types.Result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = b.call("issue_refund", refundArgs(1000))
		}()
	}
	close(start)
	waitFor(t, func() bool { return arrived.Load() >= 1 })
	close(release)
	wg.Wait()
	if c := b.payments.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Fatalf("provider saw %+v, want exactly one request and one refund", c)
	}
	replayed := 0
	for _, r := range results {
		if !r.OK {
			t.Fatalf("a caller failed: %s", r.Observation)
		}
		if r.Meta.Replayed {
			replayed++
		}
		var d struct {
			RefundID string `json:"refund_id"`
		}
		json.Unmarshal(r.Data, &d)
		if d.RefundID != "RF-99203" {
			t.Errorf("caller got refund %q", d.RefundID)
		}
	}
	if replayed != n-1 {
		t.Errorf("replayed = %d, want %d", replayed, n-1)
	}
	rows, _ := b.gw.History(context.Background(), b.run.ID)
	if len(rows) != n {
		t.Errorf("execution rows = %d, want %d", len(rows), n)
	}
	rep, _ := b.gw.Replay(context.Background(), b.run.ID)
	if !rep.Matches {
		t.Errorf("replay does not match")
	}
	run, _ := b.gw.GetRun(context.Background(), b.run.ID)
	if !strings.Contains(string(run.State), `"refunded_paise":1000`) {
		t.Errorf("state applied more than once: %s", run.State)
	}
}

func TestReplayOfCompletedOperation(t *testing.T) {
	b := setup(t, setupOpts{})
	first := b.call("issue_refund", refundArgs(1000))
	second := b.call("issue_refund", refundArgs(1000))
	if !first.OK || !second.OK || !second.Meta.Replayed || first.Meta.Replayed {
		t.Fatalf("first %+v\nsecond %+v", first.Meta, second.Meta)
	}
	if string(first.Data) != string(second.Data) {
		t.Errorf("replayed data differs: %s vs %s", first.Data, second.Data)
	}
	if !strings.Contains(second.Observation, "already done") || second.Meta.CompletedAt == nil {
		t.Errorf("observation: %s", second.Observation)
	}
	if b.payments.Counts().Requests != 1 {
		t.Errorf("repeat reached the provider")
	}
	conflict := b.call("issue_refund", map[string]any{"order_id": "ORD-4471", "amount_paise": 1000, "reason": "other"})
	if conflict.Code() != types.CodeIdempotencyConflict || conflict.Meta.Next != types.NextStop {
		t.Errorf("want idempotency_conflict, got %s: %s", conflict.Code(), conflict.Observation)
	}
	if b.payments.Counts().Requests != 1 {
		t.Errorf("conflict reached the provider")
	}
}

// Integers beyond 2^53 reach the dependency exactly as the model wrote
// them, and come back exactly.
func TestBigIntegersExact(t *testing.T) {
	var body atomic.Value
	b := setup(t, setupOpts{
		handler: func(p *sim.Payments) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "POST" && r.URL.Path == "/ledger" {
					raw, _ := io.ReadAll(r.Body)
					body.Store(string(raw))
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"balance":9007199254740993}`)
					return
				}
				p.ServeHTTP(w, r)
			})
		},
		mutate: func(cfg *config.Config) {
			cfg.Tools["post_ledger"] = &config.Tool{Description: "Post a ledger entry.", Dependency: "payments", Effect: "idempotent",
				Request:     &config.Request{Method: "POST", Path: "/ledger"},
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"amount": map[string]any{"type": "integer"}}}}
		},
	})
	res := b.call("post_ledger", json.RawMessage(`{"amount": 9007199254740993}`))
	if !res.OK {
		t.Fatal(res.Observation)
	}
	if got := body.Load().(string); !strings.Contains(got, "9007199254740993") {
		t.Errorf("dependency received %s", got)
	}
	if !strings.Contains(string(res.Data), "9007199254740993") || !strings.Contains(res.Observation, "9007199254740993") {
		t.Errorf("result lost precision: %s / %s", res.Data, res.Observation)
	}
}

func TestDependencyFailures(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + closed.Addr().String()
	closed.Close()
	statusHandler := func(status int, header map[string]string) func(p *sim.Payments) http.Handler {
		return func(p *sim.Payments) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/orders/ORD-4471") && !strings.HasSuffix(r.URL.Path, "refunds") {
					p.ServeHTTP(w, r)
					return
				}
				for k, v := range header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(status)
				io.WriteString(w, `{"error":"nope"}`)
			})
		}
	}
	tests := []struct {
		name     string
		handler  func(p *sim.Payments) http.Handler
		dead     bool
		tool     string
		want     types.Code
		attempts int
		side     types.SideEffect
		next     types.Next
	}{
		{"connection refused: never delivered, retried", nil, true, "list_refunds", types.CodeConnectFailed, 4, types.SideEffectNone, types.NextRetry},
		{"400 is permanent: one attempt", statusHandler(400, nil), false, "issue_refund", types.CodeRejected, 1, types.SideEffectNone, types.NextFixArgs},
		{"429 is retried, honouring Retry-After", statusHandler(429, map[string]string{"Retry-After": "2"}), false, "issue_refund", types.CodeRateLimited, 4, types.SideEffectNone, types.NextWait},
		{"500 on a read is retried", statusHandler(500, nil), false, "list_refunds", types.CodeUpstreamError, 4, types.SideEffectNone, types.NextRetry},
		{"500 on a write is not", statusHandler(500, nil), false, "issue_refund", types.CodeUnknownOutcome, 1, types.SideEffectUnknown, types.NextVerify},
		{"503 on a write: declined, so retried", statusHandler(503, nil), false, "issue_refund", types.CodeUpstreamError, 4, types.SideEffectNone, types.NextRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOpts{handler: tt.handler, mutate: func(cfg *config.Config) {
				if tt.dead {
					cfg.Dependencies["payments"].BaseURL = deadURL
					cfg.Dependencies["payments"].Breaker.Threshold = 100
				}
			}})
			args := map[string]any{"order_id": "ORD-4471"}
			if tt.tool == "issue_refund" {
				args = refundArgs(100)
			}
			res := b.call(tt.tool, args)
			if res.Code() != tt.want || res.Meta.Attempts != tt.attempts || res.Meta.SideEffect != tt.side || res.Meta.Next != tt.next {
				t.Fatalf("got code=%s attempts=%d side=%s next=%s, want %s %d %s %s\n%s",
					res.Code(), res.Meta.Attempts, res.Meta.SideEffect, res.Meta.Next, tt.want, tt.attempts, tt.side, tt.next, res.Observation)
			}
			if tt.want == types.CodeRateLimited {
				for _, s := range b.clock.Sleeps() {
					if s < 2*time.Second {
						t.Errorf("slept %s, sooner than Retry-After 2s", s)
					}
				}
			}
		})
	}
}

func TestCircuitOpensAndSaysWhen(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + closed.Addr().String()
	closed.Close()
	b := setup(t, setupOpts{mutate: func(cfg *config.Config) {
		cfg.Dependencies["payments"].BaseURL = dead
		cfg.Dependencies["payments"].Breaker = config.Breaker{Threshold: 3, Cooldown: config.Duration(time.Minute)}
	}})
	first := b.call("list_refunds", map[string]any{"order_id": "ORD-4471"})
	if first.Code() != types.CodeConnectFailed {
		t.Fatalf("first: %s", first.Observation)
	}
	second := b.call("list_refunds", map[string]any{"order_id": "ORD-4471"})
	if second.Code() != types.CodeCircuitOpen || second.Meta.Next != types.NextWait || second.Meta.RetryAfterMS <= 0 {
		t.Fatalf("second: %s %+v", second.Code(), second.Meta)
	}
	if !strings.Contains(second.Observation, "payments") || second.Meta.Attempts != 0 {
		t.Errorf("observation: %s (attempts %d)", second.Observation, second.Meta.Attempts)
	}
}

func TestStepBudget(t *testing.T) {
	b := setup(t, setupOpts{maxSteps: 2})
	b.call("list_refunds", map[string]any{"order_id": "ORD-4471"})
	b.call("nope", map[string]any{})
	res := b.call("list_refunds", map[string]any{"order_id": "ORD-4471"})
	if res.Code() != types.CodeStepBudgetExhausted || res.Meta.Next != types.NextStop {
		t.Fatalf("got %s", res.Code())
	}
	if b.payments.Counts().Reads != 1 {
		t.Errorf("a call past the budget reached the provider")
	}
}

func TestGoFunctionTools(t *testing.T) {
	b := setup(t, setupOpts{mutate: func(cfg *config.Config) {
		cfg.Tools["explode"] = &config.Tool{Description: "Panics.", Effect: "read",
			Func: func(ctx context.Context, args json.RawMessage) (any, error) { panic("secret-token-123") }}
		cfg.Tools["shout"] = &config.Tool{Description: "Returns a bare string.", Effect: "read",
			Func: func(ctx context.Context, args json.RawMessage) (any, error) { return "HELLO", nil }}
	}})
	res := b.call("explode", map[string]any{})
	if res.Code() != types.CodeInternalError || strings.Contains(res.Observation, "secret-token-123") {
		t.Errorf("panic: %s: %s", res.Code(), res.Observation)
	}
	res = b.call("shout", map[string]any{})
	if !res.OK || string(res.Data) != `"HELLO"` {
		t.Errorf("bare string: %s %s", res.Code(), res.Data)
	}
}

func TestUnknownRun(t *testing.T) {
	b := setup(t, setupOpts{})
	_, err := b.gw.Call(context.Background(), "no-such-run", "list_refunds", map[string]any{"order_id": "ORD-4471"})
	if err == nil || !strings.Contains(err.Error(), "no-such-run") {
		t.Fatalf("err = %v", err)
	}
}

// A client that hangs up does not cut a write in half: the call runs on and
// records its outcome.
func TestClientCancelDoesNotAbandonTheWrite(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, setupOpts{honourKeys: true})
	b.payments.Hold = func(int) <-chan struct{} { return release }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *types.Result)
	go func() {
		res, _ := b.gw.Call(ctx, b.run.ID, "issue_refund", refundArgs(1000))
		done <- res
	}()
	waitFor(t, func() bool { return b.payments.Counts().Requests == 1 })
	cancel()
	close(release)
	res := <-done
	if !res.OK {
		t.Fatalf("the write was abandoned: %s", res.Observation)
	}
	rows, _ := b.gw.History(context.Background(), b.run.ID)
	if len(rows) != 1 || !rows[0].OK {
		t.Fatalf("rows = %+v", rows)
	}
}

// A write that times out with no honoured key and no verify read: not
// retried, reported as a possible effect, and never re-sent on repeat.
func TestTimeoutUnknownOutcomeIsNeverResent(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, setupOpts{speed: 50, mutate: func(cfg *config.Config) { cfg.Tools["issue_refund"].Verify = nil }})
	b.payments.Hold = func(int) <-chan struct{} { return release }
	first := b.call("issue_refund", refundArgs(1000))
	close(release)
	if first.Code() != types.CodeTimeoutUnknownOutcome || first.Meta.Attempts != 1 ||
		first.Meta.SideEffect != types.SideEffectUnknown || first.Meta.Next != types.NextVerify || first.Error.Retryable {
		t.Fatalf("got %s attempts=%d side=%s next=%s: %s", first.Code(), first.Meta.Attempts, first.Meta.SideEffect, first.Meta.Next, first.Observation)
	}
	again := b.call("issue_refund", refundArgs(1000))
	if again.Code() != types.CodeUnknownOutcome || again.Meta.Next != types.NextVerify {
		t.Fatalf("repeat: %s: %s", again.Code(), again.Observation)
	}
	waitFor(t, func() bool { return b.payments.Counts().Refunds == 1 })
	if c := b.payments.Counts(); c.Requests != 1 {
		t.Fatalf("the write was sent %d times", c.Requests)
	}
}

// The same operation executing elsewhere past this call's deadline:
// duplicate_in_flight, and nothing sent twice.
func TestDuplicateInFlight(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var runs atomic.Int32
	b := setup(t, setupOpts{mutate: func(cfg *config.Config) {
		cfg.Tools["slow_write"] = &config.Tool{Description: "A write that takes its time.", Effect: "write",
			Timeout: config.Timeout{Total: config.Duration(200 * time.Millisecond)},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				if runs.Add(1) == 1 {
					close(entered)
				}
				<-release // ignores ctx: a badly behaved tool
				return map[string]any{"done": true}, nil
			}}
	}})
	done := make(chan *types.Result)
	go func() { done <- b.call("slow_write", map[string]any{}) }()
	<-entered
	second := b.call("slow_write", map[string]any{})
	close(release)
	first := <-done
	if second.Code() != types.CodeDuplicateInFlight || second.Meta.Next != types.NextWait || second.Meta.RetryAfterMS <= 0 {
		t.Fatalf("second: %s %+v", second.Code(), second.Meta)
	}
	if !first.OK || runs.Load() != 1 {
		t.Fatalf("first: %s, runs %d", first.Code(), runs.Load())
	}
	third := b.call("slow_write", map[string]any{})
	if !third.OK || !third.Meta.Replayed || runs.Load() != 1 {
		t.Fatalf("third: %s replayed=%v runs=%d", third.Code(), third.Meta.Replayed, runs.Load())
	}
}

// Concurrent calls of one run that each update its state: every commit that
// lost the race re-applies its update to the newer state, so none is lost
// and none is counted twice.
func TestConcurrentStateUpdatesOfOneRun(t *testing.T) {
	b := setup(t, setupOpts{})
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := b.call("issue_refund", refundArgs(100+i)); !res.OK {
				t.Errorf("refund %d: %s", i, res.Observation)
			}
		}()
	}
	wg.Wait()
	want := 0
	for i := range n {
		want += 100 + i
	}
	run, _ := b.gw.GetRun(context.Background(), b.run.ID)
	if !strings.Contains(string(run.State), fmt.Sprintf(`"refunded_paise":%d`, want)) {
		t.Fatalf("state %s, want refunded_paise %d", run.State, want)
	}
	if rep, err := b.gw.Replay(context.Background(), b.run.ID); err != nil || !rep.Matches {
		t.Fatalf("replay: %+v %v", rep, err)
	}
}
