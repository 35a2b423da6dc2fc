package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/types"
)

// quotaRefund answers by order: ORD-REJECT is refused by the provider
// (nothing done), ORD-LOST fails after delivery (outcome unknown), any
// other order is refunded.
func quotaRefund(ctx context.Context, args json.RawMessage) (any, error) {
	var a struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(args, &a)
	switch a.OrderID {
	case "ORD-REJECT":
		return nil, &config.FuncError{Code: types.CodeRejected, Message: "order is not refundable"}
	case "ORD-LOST":
		return nil, errors.New("connection reset after the request was sent")
	}
	return map[string]any{"refund_id": "rf_" + a.OrderID}, nil
}

func quotaConfig() *config.Config {
	cfg := limitConfig(quotaRefund, func(t *config.Tool) {
		t.Rules, t.State = nil, nil // no state: the quota alone limits
		t.Quotas = []config.Quota{{Name: "refunds_per_customer", Key: "{principal.id}", Amount: "args.amount_paise",
			Limit: 500000, Window: config.Duration(time.Hour), Message: "Customer {principal.id} may be refunded at most 500000 paise an hour."}}
	})
	return cfg
}

func TestQuotaAcrossRuns(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for name, open := range limitStores(t, clk) {
		t.Run(name, func(t *testing.T) {
			gw := openLimitGateway(t, quotaConfig(), open(t), clk)
			if c, _ := compiledTool(t, gw, "issue_refund"); c.StateWriter {
				t.Fatal("a tool without state rules must not take the state-writer slot")
			}
			newRun := func(customer string) string {
				r, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: customer}})
				if err != nil {
					t.Fatal(err)
				}
				return r.ID
			}
			refund := func(run, order string, amount int) *types.Result {
				t.Helper()
				res, err := gw.Call(context.Background(), run, "issue_refund", map[string]any{"order_id": order, "amount_paise": amount})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			runs := []string{newRun("cust_42"), newRun("cust_42"), newRun("cust_42")}
			start := clk.Now()
			if res := refund(runs[0], "ORD-1", 200000); !res.OK {
				t.Fatalf("first: %s", res.Observation)
			}
			clk.Advance(10 * time.Minute)
			if res := refund(runs[1], "ORD-2", 200000); !res.OK {
				t.Fatalf("second: %s", res.Observation)
			}
			// A third run of the same customer finds the quota spent.
			res := refund(runs[2], "ORD-3", 200000)
			if res.Code() != types.CodeQuotaExceeded || res.Error.Retryable || res.Meta.Next != types.NextWait ||
				res.Meta.SideEffect != types.SideEffectNone || res.Meta.RetryAfterMS != (50*time.Minute).Milliseconds() {
				t.Fatalf("third: %s retryable %v next %s after %d ms: %s", res.Code(), res.Error.Retryable, res.Meta.Next, res.Meta.RetryAfterMS, res.Observation)
			}
			for _, want := range []string{"400000 of 500000 used", "100000 left", "at most 500000 paise an hour", start.Add(time.Hour).Format(time.RFC3339)} {
				if !strings.Contains(res.Observation, want) {
					t.Errorf("observation %q does not say %q", res.Observation, want)
				}
			}
			// More than the whole quota can never fit: escalate.
			if res := refund(runs[2], "ORD-4", 600000); res.Code() != types.CodeQuotaExceeded || res.Meta.Next != types.NextEscalate {
				t.Errorf("600000: %s next %s", res.Code(), res.Meta.Next)
			}
			// Another customer is unaffected.
			if res := refund(newRun("cust_7"), "ORD-5", 500000); !res.OK {
				t.Errorf("another customer: %s", res.Observation)
			}
			// A downstream refusal releases its reservation; an unknown
			// outcome keeps it.
			other := newRun("cust_9")
			if res := refund(other, "ORD-REJECT", 400000); res.Code() != types.CodeRejected {
				t.Fatalf("rejected: %s", res.Observation)
			}
			if res := refund(other, "ORD-LOST", 400000); res.Meta.SideEffect != types.SideEffectUnknown {
				t.Fatalf("lost: %s %s", res.Code(), res.Meta.SideEffect)
			}
			if res := refund(other, "ORD-6", 200000); res.Code() != types.CodeQuotaExceeded {
				t.Errorf("after an unknown 400000: %s, want quota_exceeded (the unknown outcome keeps its reservation)", res.Code())
			}
			if res := refund(other, "ORD-7", 100000); !res.OK {
				t.Errorf("100000 after the refusal released its 400000: %s", res.Observation)
			}
			// The window slides: an hour after the first refund it no longer
			// counts.
			clk.Advance(start.Add(time.Hour).Sub(clk.Now()))
			if res := refund(runs[2], "ORD-3", 200000); !res.OK {
				t.Errorf("after the first expired: %s", res.Observation)
			}
			uses, err := gw.QuotaUsage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			byKey := map[string]toolgate.QuotaUse{}
			for _, u := range uses {
				byKey[u.Key] = u
			}
			if u := byKey["cust_42"]; u.Used != 400000 || u.Left != 100000 || u.Reservations != 2 || !u.NextFreeAt.Equal(start.Add(70*time.Minute)) {
				t.Errorf("cust_42: %+v", u)
			}
			if u := byKey["cust_9"]; u.Used != 500000 {
				t.Errorf("cust_9: %+v, want 500000 (400000 unknown + 100000)", u)
			}
		})
	}
}

// A quota keyed by {run_id} (or {call_id}) is per run: two keys' runs
// that share a public id (support-bot/r1 and other-bot/r1) have a quota
// each, so one tenant can neither spend nor see the other's.
func TestRunQuotaScopedToTheKey(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for name, open := range limitStores(t, clk) {
		t.Run(name, func(t *testing.T) {
			cfg := limitConfig(quotaRefund, func(t *config.Tool) {
				t.Rules, t.State = nil, nil
				t.Quotas = []config.Quota{{Name: "refunds_per_run", Key: "{run_id}", Amount: "args.amount_paise",
					Limit: 300000, Window: config.Duration(time.Hour)}}
			})
			gw := openLimitGateway(t, cfg, open(t), clk)
			for _, owner := range []string{"support-bot", "other-bot"} {
				_, err := gw.StartRun(context.Background(), toolgate.RunOptions{ID: "r1", Owner: owner, Principal: toolgate.Principal{ID: "cust_42"}})
				if err != nil {
					t.Fatal(err)
				}
			}
			refund := func(owner, order string) *types.Result {
				t.Helper()
				res, err := gw.Call(context.Background(), types.ScopedRunID(owner, "r1"), "issue_refund", map[string]any{"order_id": order, "amount_paise": 200000})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := refund("support-bot", "ORD-1"); !res.OK {
				t.Fatalf("support-bot: %s", res.Observation)
			}
			if res := refund("other-bot", "ORD-2"); !res.OK {
				t.Fatalf("other-bot's own run was charged support-bot's use: %s %s", res.Code(), res.Observation)
			}
			if res := refund("support-bot", "ORD-3"); res.Code() != types.CodeQuotaExceeded {
				t.Fatalf("support-bot's second: %s, want quota_exceeded", res.Code())
			}
		})
	}
}

// Regression: a repeat of a write limited by a quota alone (it takes no
// state-writer slot) whose operation ended unknown was admitted again and
// again, finding the same unknown operation each time, until its deadline
// ran out (store_unavailable). Like any write's repeat, it is answered on
// the unknown operation at once: without a verify read, unknown_outcome,
// and nothing is sent again.
func TestQuotaOnlyRepeatOfUnknownOutcome(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for name, open := range limitStores(t, clk) {
		t.Run(name, func(t *testing.T) {
			var sent atomic.Int32
			cfg := limitConfig(func(ctx context.Context, args json.RawMessage) (any, error) {
				sent.Add(1)
				return quotaRefund(ctx, args)
			}, func(t *config.Tool) {
				t.Rules, t.State = nil, nil
				t.Quotas = []config.Quota{{Name: "refunds_per_customer", Key: "{principal.id}", Amount: "args.amount_paise",
					Limit: 500000, Window: config.Duration(time.Hour)}}
			})
			gw := openLimitGateway(t, cfg, open(t), clk)
			run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_9"}})
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"order_id": "ORD-LOST", "amount_paise": 100000}
			if res, err := gw.Call(context.Background(), run.ID, "issue_refund", args); err != nil || res.Meta.SideEffect != types.SideEffectUnknown {
				t.Fatalf("first: %v %+v", err, res)
			}
			res, err := gw.Call(context.Background(), run.ID, "issue_refund", args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Code() != types.CodeUnknownOutcome || res.Meta.SideEffect != types.SideEffectUnknown || sent.Load() != 1 {
				t.Fatalf("repeat: %s %s, sent %d times; want unknown_outcome, side effect unknown, sent once: %s", res.Code(), res.Meta.SideEffect, sent.Load(), res.Observation)
			}
		})
	}
}
