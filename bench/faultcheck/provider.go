package faultcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
)

// Provider is the fake payment provider toolgate calls: the simulated
// payments (every order accepted, Idempotency-Key honoured) on a real HTTP
// server on 127.0.0.1.
type Provider struct {
	*sim.Payments
	mcp  *sim.MCPHandler
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// StartProvider serves a new provider on a free loopback port: its HTTP
// API, and its MCP server at /mcp.
func StartProvider() (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultcheck: provider: %w", err)
	}
	p := &Provider{Payments: sim.NewPayments(), ln: ln, done: make(chan error, 1)}
	p.HonourKeys = true
	p.mcp = p.NewMCPHandler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", p.mcp)
	mux.Handle("/", p.Payments)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { p.done <- p.srv.Serve(ln) }()
	return p, nil
}

// Addr is the provider's address, "127.0.0.1:PORT".
func (p *Provider) Addr() string { return p.ln.Addr().String() }

// Close stops the provider and waits for its requests to end.
func (p *Provider) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.mcp.CloseSessions()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		p.srv.Close()
	}
	if serr := <-p.done; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// Effects maps each order to the refunds the provider made for it.
func (p *Provider) Effects() map[string]int {
	m := map[string]int{}
	for _, r := range p.Refunds() {
		m[r.OrderID]++
	}
	return m
}
