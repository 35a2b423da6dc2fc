package demo

import (
	"context"
	"net/http/httptest"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// MCPConfig is the demo's toolgate configuration in front of the payments
// provider's MCP server at url: every tool imported, and the one write
// given what the server cannot say about it (its timeout, its key, the
// verify read through the server's own list_refunds).
func MCPConfig(url string, speed float64) *config.Config {
	o := Options{Speed: speed}
	d := func(x time.Duration) config.Duration { return config.Duration(o.scale(x)) }
	return &config.Config{
		Store: "memory",
		Dependencies: map[string]*config.Dependency{"payments_mcp": {
			MCP:    &config.MCP{URL: url},
			Import: &config.Import{Tools: []string{"*"}},
		}},
		Tools: map[string]*config.Tool{
			"create_refund": {
				Effect:      types.EffectWrite,
				Timeout:     config.Timeout{Connect: d(2 * time.Second), Read: d(5 * time.Second)},
				Retry:       config.Retry{MaxAttempts: 4, Base: d(time.Second), Cap: d(30 * time.Second)},
				Idempotency: config.Idempotency{Key: "refund:{order_id}:{amount_paise}:{principal.id}"},
				Verify: &config.Lookup{Lookup: "list_refunds", Args: map[string]string{"order_id": "args.order_id"},
					Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
					Result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"},
			},
			"list_refunds": {Timeout: config.Timeout{Connect: d(time.Second), Read: d(2 * time.Second)}},
		},
	}
}

// throughMCP is the incident over MCP: the provider's MCP server takes 9 s,
// 7 s, 2.7 s to make a refund, toolgate waits 5 s, and the model repeats
// the call as the observation advises.
func throughMCP(ctx context.Context, o Options) (Scenario, error) {
	p := sim.NewPayments(sim.Order{OrderID: orderID, CustomerID: customerID, AmountPaise: 500000})
	for _, d := range incident {
		p.Delays = append(p.Delays, o.scale(d))
	}
	h := p.NewMCPHandler()
	srv := httptest.NewServer(h)
	stop := func() { h.CloseSessions(); srv.Close() }
	defer stop()
	cfg := MCPConfig(srv.URL, o.Speed)
	cfg.Store = o.Store
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, StoreFromConfig: true, Logger: o.Logger})
	if err != nil {
		return Scenario{}, err
	}
	defer gw.Close()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: customerID}})
	if err != nil {
		return Scenario{}, err
	}
	res, told, err := actAsModel(ctx, gw, run.ID, "create_refund")
	if err != nil {
		return Scenario{}, err
	}
	rep, err := gw.Replay(ctx, run.ID)
	if err != nil {
		return Scenario{}, err
	}
	gw.Close()
	stop() // waits for the provider to finish every refund it took
	c := p.Counts()
	verified := res.Meta.Verified
	return Scenario{Name: "toolgate in front of an MCP server, verify read", Requests: c.Requests, Refunds: c.Refunds,
		PaidPaise: c.PaidPaise, Calls: len(told), Told: res.Observation, Observations: told, Outcome: string(res.Code()),
		ReplayMatches: &rep.Matches, Verified: &verified}, nil
}
