package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
)

// simulators are the simulators `toolgate sim` can run (a function, not a
// variable: the runs refer back to the command table through flags).
func simulators() map[string]func(ctx context.Context, e *env, args []string) error {
	return map[string]func(ctx context.Context, e *env, args []string) error{
		"payments": runSimPayments,
	}
}

func runSim(ctx context.Context, e *env, args []string) error {
	sims := simulators()
	names := make([]string, 0, len(sims))
	for n := range sims {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(e.stderr, "Usage: toolgate sim <%s> [flags]   (toolgate sim payments --help for its flags)\n", strings.Join(names, "|"))
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return nil
		}
		return fmt.Errorf("%w: name the simulator to run (%s)", errUsage, strings.Join(names, ", "))
	}
	run, ok := sims[args[0]]
	if !ok {
		return fmt.Errorf("%w: no simulator %q (have: %s)", errUsage, args[0], strings.Join(names, ", "))
	}
	return run(ctx, e, args[1:])
}

// runSimPayments serves internal/sim.Payments until ctx ends.
func runSimPayments(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "sim", "payments [--listen ADDR] [--slow 9s,7s,2.7s] [--honour-keys] [--orders ID:CUSTOMER:PAISE,...] [--mcp]",
		"toolgate sim payments --listen 127.0.0.1:9001 --slow 9s,7s,2.7s\n"+
			"  GET  /orders/{id}           the order\n"+
			"  GET  /orders/{id}/refunds   {\"order_id\", \"refunds\": [...]}\n"+
			"  POST /refunds               {\"order_id\", \"amount_paise\", \"reason\"} -> the refund\n"+
			"  /mcp (with --mcp)           the same as an MCP server: get_order, list_refunds, create_refund")
	listen := fs.String("listen", "127.0.0.1:9001", "address to listen on (port 0 picks a free port)")
	slow := fs.String("slow", "", "how long each POST /refunds takes, in arrival order; later ones take the last (e.g. 9s,7s,2.7s: the incident)")
	honour := fs.Bool("honour-keys", false, "answer a repeated Idempotency-Key with the first request's refund instead of making another")
	withMCP := fs.Bool("mcp", false, "also serve the provider as an MCP server (streamable HTTP) at /mcp; --honour-keys then honours the _meta toolgate/operation_key too")
	orders := fs.String("orders", "ORD-4471:cust_42:500000", "the orders the provider knows, as ORDER_ID:CUSTOMER_ID:AMOUNT_PAISE, comma-separated")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	p, err := newPayments(*slow, *orders, *honour)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	handler, mcpFace := paymentsHandler(p, *withMCP)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(e.stdout, "payments simulator listening on http://%s\n", ln.Addr())
	if mcpFace != nil {
		fmt.Fprintf(e.stdout, "payments MCP server at http://%s/mcp\n", ln.Addr())
	}
	fmt.Fprintf(e.stderr, "orders: %s; refund delays: %s; honours Idempotency-Key: %t\n", *orders, orNone(*slow), *honour)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Refunds being processed finish first: they happen whether or not
	// their clients are still waiting.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if mcpFace != nil {
		mcpFace.CloseSessions() // their standing streams would hold Shutdown
	}
	err = hs.Shutdown(sctx)
	<-served
	c := p.Counts()
	fmt.Fprintf(e.stderr, "refund requests received: %d, refunds made: %d, paid: %d paise, reads: %d\n", c.Requests, c.Refunds, c.PaidPaise, c.Reads)
	return err
}

// newPayments is the simulator the flags describe: its orders, the delays
// of its refunds (see parseDelays) and whether it honours idempotency
// keys.
func newPayments(slow, orders string, honourKeys bool) (*sim.Payments, error) {
	delays, err := parseDelays(slow)
	if err != nil {
		return nil, err
	}
	list, err := parseOrders(orders)
	if err != nil {
		return nil, err
	}
	p := sim.NewPayments(list...)
	p.HonourKeys = honourKeys
	p.Delays = delays
	return p, nil
}

// paymentsHandler serves p's HTTP API and, withMCP, the same as an MCP
// server at /mcp (mcpFace, nil without).
func paymentsHandler(p *sim.Payments, withMCP bool) (handler http.Handler, mcpFace *sim.MCPHandler) {
	if !withMCP {
		return p, nil
	}
	mcpFace = p.NewMCPHandler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpFace)
	mux.Handle("/", p)
	return mux, mcpFace
}

// parseDelays reads "9s,7s,2.7s".
func parseDelays(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: --slow %q: want durations like 9s,7s,2.7s", errUsage, s)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseOrders reads "ORD-1:cust_1:500000,ORD-2:cust_2:1000".
func parseOrders(s string) ([]sim.Order, error) {
	var out []sim.Order
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 3 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("%w: --orders %q: want ORDER_ID:CUSTOMER_ID:AMOUNT_PAISE", errUsage, part)
		}
		amount, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || amount <= 0 {
			return nil, fmt.Errorf("%w: --orders %q: the amount must be a whole number of paise above 0", errUsage, part)
		}
		out = append(out, sim.Order{OrderID: f[0], CustomerID: f[1], AmountPaise: amount})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --orders: the provider needs at least one order", errUsage)
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
