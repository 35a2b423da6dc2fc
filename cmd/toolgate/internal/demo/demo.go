// Package demo replays the refund incident: a payment provider that takes
// 9 s, 7 s, then 2.7 s to answer, against a client that gives up after 5 s.
// It runs the textbook retry loop against it, then the same refund through
// toolgate twice (a provider that honours Idempotency-Key, and one that does
// not but offers a verify read), and reports what each produced.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// Options tune the demo.
type Options struct {
	// Speed divides every duration: 10 runs the 16-second incident in under
	// two seconds. Default 1.
	Speed float64
	// Store is the toolgate store; default a SQLite file in Dir.
	Store string
	// Dir holds the default SQLite file; default a temporary directory the
	// caller provides.
	Dir string
	// Logger receives toolgate's call logs; default discards them.
	Logger *slog.Logger
}

// Scenario is what one way of calling the provider produced.
type Scenario struct {
	// Name says how the refund was sent.
	Name string `json:"name"`
	// Requests counts refund requests the provider received.
	Requests int `json:"requests"`
	// Refunds counts refunds the provider made.
	Refunds int `json:"refunds"`
	// PaidPaise is the money paid out.
	PaidPaise int64 `json:"paid_paise"`
	// Calls counts the model's calls (toolgate scenarios).
	Calls int `json:"calls"`
	// Told is what the model was told last.
	Told string `json:"told"`
	// Observations are what the model was told after each call, in order.
	Observations []string `json:"observations,omitempty"`
	// Outcome is the final code (ok, or the error code).
	Outcome string `json:"outcome"`
	// ReplayMatches says the run's state rebuilt from its log equals the
	// stored state (toolgate scenarios).
	ReplayMatches *bool `json:"replay_matches,omitempty"`
	// Verified says the last answer was settled by a verify read (the MCP
	// scenario).
	Verified *bool `json:"verified,omitempty"`
}

// Report is the demo's result.
type Report struct {
	Naive              Scenario `json:"naive"`
	ToolgateIdempotent Scenario `json:"toolgate_idempotent"`
	ToolgateVerify     Scenario `json:"toolgate_verify"`
	ToolgateMCP        Scenario `json:"toolgate_mcp"`
	Speed              float64  `json:"speed"`
}

const (
	orderID     = "ORD-4471"
	customerID  = "cust_42"
	amountPaise = 425000
)

var incident = []time.Duration{9 * time.Second, 7 * time.Second, 2700 * time.Millisecond}

// Run plays the four scenarios one after the other.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Speed <= 0 {
		o.Speed = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Store == "" {
		if o.Dir == "" {
			return nil, errors.New("demo: Options.Dir or Options.Store is required")
		}
		o.Store = "sqlite:" + filepath.Join(o.Dir, "toolgate-demo.db")
	}
	rep := &Report{Speed: o.Speed}
	var err error
	if rep.Naive, err = naive(ctx, o); err != nil {
		return nil, fmt.Errorf("naive scenario: %w", err)
	}
	if rep.ToolgateIdempotent, err = throughToolgate(ctx, o, true); err != nil {
		return nil, fmt.Errorf("toolgate scenario (idempotency key): %w", err)
	}
	if rep.ToolgateVerify, err = throughToolgate(ctx, o, false); err != nil {
		return nil, fmt.Errorf("toolgate scenario (verify): %w", err)
	}
	if rep.ToolgateMCP, err = throughMCP(ctx, o); err != nil {
		return nil, fmt.Errorf("toolgate scenario (MCP server): %w", err)
	}
	return rep, nil
}

func (o Options) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) / o.Speed)
}

func provider(o Options, honourKeys bool) (*sim.Payments, *httptest.Server) {
	p := sim.NewPayments(sim.Order{OrderID: orderID, CustomerID: customerID, AmountPaise: 500000})
	p.HonourKeys = honourKeys
	for _, d := range incident {
		p.Delays = append(p.Delays, o.scale(d))
	}
	return p, httptest.NewServer(p)
}

// naive is the textbook loop: a 5 s timeout, four attempts, exponential
// backoff with jitter, and no idempotency key.
func naive(ctx context.Context, o Options) (Scenario, error) {
	p, srv := provider(o, false)
	client := &http.Client{Timeout: o.scale(5 * time.Second)}
	body, _ := json.Marshal(map[string]any{"order_id": orderID, "amount_paise": amountPaise})
	told := ""
	outcome := "timeout"
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := client.Post(srv.URL+"/refunds", "application/json", bytes.NewReader(body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			told = fmt.Sprintf("200 OK %s", bytes.TrimSpace(b))
			outcome = "ok"
			break
		}
		told = "TIMEOUT after 5000ms - no response; retrying"
		delay := min(time.Second<<attempt, 30*time.Second)
		delay = time.Duration(float64(delay) * (0.5 + rand.Float64()))
		select {
		case <-time.After(o.scale(delay)):
		case <-ctx.Done():
			srv.Close()
			return Scenario{}, ctx.Err()
		}
	}
	client.CloseIdleConnections()
	srv.Close() // waits for the provider to finish every request it took
	c := p.Counts()
	return Scenario{Name: "textbook retry loop", Requests: c.Requests, Refunds: c.Refunds, PaidPaise: c.PaidPaise, Told: told, Outcome: outcome}, nil
}

// Config is the demo's toolgate configuration against a provider at base.
func Config(base string, speed float64, honourKeys bool) *config.Config {
	o := Options{Speed: speed}
	d := func(x time.Duration) config.Duration { return config.Duration(o.scale(x)) }
	orderSchema := map[string]any{"type": "object", "required": []any{"order_id"},
		"properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "additionalProperties": false}
	refund := &config.Tool{
		Description: "Refund part or all of an order to the customer.",
		Dependency:  "payments",
		Request:     &config.Request{Method: "POST", Path: "/refunds"},
		Effect:      types.EffectWrite,
		Permission:  "refunds:write",
		InputSchema: map[string]any{
			"type": "object", "required": []any{"order_id", "amount_paise"}, "additionalProperties": false,
			"properties": map[string]any{
				"order_id":     map[string]any{"type": "string", "pattern": "^ORD-[0-9]+$"},
				"amount_paise": map[string]any{"type": "integer", "minimum": 1},
				"reason":       map[string]any{"type": "string"},
			},
		},
		Timeout:     config.Timeout{Connect: d(2 * time.Second), Read: d(5 * time.Second)},
		Retry:       config.Retry{MaxAttempts: 4, Base: d(time.Second), Cap: d(30 * time.Second)},
		Idempotency: config.Idempotency{Key: "refund:{order_id}:{amount_paise}:{run_id}"},
		Rules: []config.Rule{{
			Deny: "args.amount_paise > principal.limits.max_refund_paise", Code: "over_limit",
			Message: "Refund of {args.amount_paise} paise exceeds the {principal.limits.max_refund_paise} paise limit. Ask for approval instead of retrying.",
		}},
		Owner: &config.Lookup{Lookup: "get_order", Args: map[string]string{"order_id": "args.order_id"},
			Expect: "result.customer_id == principal.id"},
		State: map[string]string{
			"refund_id":      "result.refund_id",
			"refunded_paise": "state.refunded_paise + args.amount_paise",
		},
	}
	if honourKeys {
		refund.Idempotency.Header = "Idempotency-Key"
	} else {
		refund.Verify = &config.Lookup{Lookup: "list_refunds", Args: map[string]string{"order_id": "args.order_id"},
			Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
			Result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"}
	}
	return &config.Config{
		Store:        "memory",
		Dependencies: map[string]*config.Dependency{"payments": {BaseURL: base}},
		Tools: map[string]*config.Tool{
			"get_order": {Description: "Look up one order.", Dependency: "payments", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/orders/{order_id}"}, InputSchema: orderSchema,
				Timeout: config.Timeout{Connect: d(time.Second), Read: d(2 * time.Second)}},
			"list_refunds": {Description: "List the refunds of one order.", Dependency: "payments", Effect: types.EffectRead,
				Request: &config.Request{Method: "GET", Path: "/orders/{order_id}/refunds"}, InputSchema: orderSchema,
				Timeout: config.Timeout{Connect: d(time.Second), Read: d(2 * time.Second)}},
			"issue_refund": refund,
		},
	}
}

// throughToolgate sends the refund as a model would: one call, then, if the
// observation says to verify later, the same call again after the advised
// wait.
func throughToolgate(ctx context.Context, o Options, honourKeys bool) (Scenario, error) {
	p, srv := provider(o, honourKeys)
	defer srv.Close()
	cfg := Config(srv.URL, o.Speed, honourKeys)
	cfg.Store = o.Store
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, StoreFromConfig: true, Logger: o.Logger})
	if err != nil {
		return Scenario{}, err
	}
	defer gw.Close()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{
		Principal: toolgate.Principal{ID: customerID, Permissions: []string{"refunds:write"},
			Limits: map[string]json.Number{"max_refund_paise": "500000"}},
		State: json.RawMessage(`{"refunded_paise": 0}`),
	})
	if err != nil {
		return Scenario{}, err
	}
	res, told, err := actAsModel(ctx, gw, run.ID, "issue_refund")
	if err != nil {
		return Scenario{}, err
	}
	name := "toolgate, provider honours Idempotency-Key"
	if !honourKeys {
		name = "toolgate, no key support, verify read"
	}
	rep, err := gw.Replay(ctx, run.ID)
	if err != nil {
		return Scenario{}, err
	}
	gw.Close()
	srv.Close()
	c := p.Counts()
	outcome := string(res.Code())
	return Scenario{Name: name, Requests: c.Requests, Refunds: c.Refunds, PaidPaise: c.PaidPaise,
		Calls: len(told), Told: res.Observation, Observations: told, Outcome: outcome, ReplayMatches: &rep.Matches}, nil
}

// actAsModel makes the refund as a model would: one call of tool, then,
// while the observation says to verify later, the same call again after
// the advised wait (six calls at the most). It returns the last result and
// what the model was told after each call.
func actAsModel(ctx context.Context, gw *toolgate.Gateway, runID, tool string) (*toolgate.Result, []string, error) {
	args := map[string]any{"order_id": orderID, "amount_paise": amountPaise, "reason": "damaged in transit"}
	var told []string
	for {
		res, err := gw.Call(ctx, runID, tool, args)
		if err != nil {
			return nil, nil, err
		}
		told = append(told, res.Observation)
		if res.OK || res.Meta.Next != types.NextVerify || len(told) == 6 {
			return res, told, nil
		}
		// The model follows the advice: wait, then repeat the same call.
		select {
		case <-time.After(time.Duration(res.Meta.RetryAfterMS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}
