package pipeline_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bundle is one test's gateway, fake provider and run.
type bundle struct {
	t        *testing.T
	gw       *toolgate.Gateway
	payments *sim.Payments
	srv      *httptest.Server
	run      *toolgate.Run
	clock    *clock.Fake
}

type setupOpts struct {
	honourKeys bool
	speed      float64
	mutate     func(cfg *config.Config)
	handler    func(p *sim.Payments) http.Handler
	principal  *toolgate.Principal
	maxSteps   int64
	logger     *slog.Logger // default: discard
	// store opens the gateway's store on the test's clock (default: the
	// memory store toolgate.Open makes).
	store func(now func() time.Time) store.Store
}

// setup starts the simulated payments provider on 127.0.0.1 and a gateway
// with the refund tools of refundsConfig (memory store, fake clock so backoffs are
// instant), and opens a run for customer cust_42.
func setup(t *testing.T, o setupOpts) *bundle {
	t.Helper()
	p := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000},
		sim.Order{OrderID: "ORD-9999", CustomerID: "someone_else", AmountPaise: 100})
	p.HonourKeys = o.honourKeys
	var h http.Handler = p
	if o.handler != nil {
		h = o.handler(p)
	}
	srv := httptest.NewServer(h)
	speed := o.speed
	if speed == 0 {
		speed = 1
	}
	cfg := refundsConfig(srv.URL, speed, o.honourKeys)
	if o.mutate != nil {
		o.mutate(cfg)
	}
	clk := clock.NewFake(time.Date(2026, 11, 30, 11, 4, 2, 0, time.UTC))
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := toolgate.Options{Config: cfg, Clock: clk, Rand: clock.FixedRand(0.5), Logger: logger}
	if o.store != nil {
		opts.Store = o.store(clk.Now)
	}
	gw, err := toolgate.Open(context.Background(), opts)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	b := &bundle{t: t, gw: gw, payments: p, srv: srv, clock: clk}
	t.Cleanup(func() {
		gw.Close()
		srv.CloseClientConnections()
		srv.Close()
	})
	pr := toolgate.Principal{ID: "cust_42", Permissions: []string{"refunds:write"},
		Limits: map[string]json.Number{"max_refund_paise": "500000"}}
	if o.principal != nil {
		pr = *o.principal
	}
	b.run, err = gw.StartRun(context.Background(), toolgate.RunOptions{Principal: pr,
		State: json.RawMessage(`{"refunded_paise": 0}`), MaxSteps: o.maxSteps})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bundle) call(tool string, args any) *types.Result {
	b.t.Helper()
	res, err := b.gw.Call(context.Background(), b.run.ID, tool, args)
	if err != nil {
		b.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func refundArgs(amount any) map[string]any {
	return map[string]any{"order_id": "ORD-4471", "amount_paise": amount}
}
