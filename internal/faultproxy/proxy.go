package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is one TCP proxy from Addr to an upstream address, with at most
// one fault on at a time. Its methods are safe for concurrent use.
type Proxy struct {
	mu      sync.Mutex
	proxy   *toxiproxy.Proxy
	toxics  []string // the names of the toxics on now
	refused bool     // the listener is closed (Refuse)
	closed  bool
	fault   string // the fault on now, "" when healthy
}

// Start listens on 127.0.0.1 on a free port and forwards every connection
// it accepts to upstream ("host:port"), with no fault on.
func Start(upstream string) (*Proxy, error) {
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "faultproxy", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	return &Proxy{proxy: p}, nil
}

// Addr is the address the proxy listens on ("127.0.0.1:port"); it stays
// the same across Refuse and Heal.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proxy.Listen
}

// Fault names the fault on now ("latency", "blackhole", "drop-answers",
// "reset", "refuse", "trickle", "truncate"), or "" when healthy.
func (p *Proxy) Fault() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// toxic is one toxiproxy toxic as its JSON API takes it.
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// Directions of the bytes a toxic acts on.
const (
	toUpstream   = "upstream"   // from the client to the upstream: requests
	toDownstream = "downstream" // from the upstream to the client: answers
)

// set heals the proxy and puts on the named fault made of toxics.
func (p *Proxy) set(fault string, toxics ...toxic) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("faultproxy: %s on a closed proxy", fault)
	}
	if err := p.heal(); err != nil {
		return err
	}
	for _, t := range toxics {
		t.Toxicity = 1
		body, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("faultproxy: %s: %w", fault, err)
		}
		if _, err := p.proxy.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
			return fmt.Errorf("faultproxy: %s: %w", fault, err)
		}
		p.toxics = append(p.toxics, t.Name)
	}
	p.fault = fault
	return nil
}

// heal takes every toxic off and listens again if refused; p.mu is held.
func (p *Proxy) heal() error {
	for _, name := range p.toxics {
		if err := p.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
			return fmt.Errorf("faultproxy: heal: remove %s: %w", name, err)
		}
	}
	p.toxics = nil
	if p.refused {
		if err := p.proxy.Start(); err != nil {
			return fmt.Errorf("faultproxy: heal: listen again on %s: %w", p.proxy.Listen, err)
		}
		p.refused = false
	}
	p.fault = ""
	return nil
}

// Heal takes the fault off: new connections carry bytes again, a refused
// proxy listens again on the same address, and connections that lived
// through a blackhole or dropped answers are closed (their streams lost
// bytes, so nothing may reuse them); others carry on.
func (p *Proxy) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	return p.heal()
}

// Latency delays every answer (every chunk of bytes from the upstream) by d.
func (p *Proxy) Latency(d time.Duration) error {
	return p.set("latency", toxic{Name: "latency", Type: "latency", Stream: toDownstream,
		Attributes: map[string]any{"latency": d.Milliseconds()}})
}

// Blackhole keeps accepting connections but carries no byte either way,
// on new and existing connections: requests never reach the upstream and
// nothing comes back, and no connection is closed.
func (p *Proxy) Blackhole() error {
	return p.set("blackhole",
		toxic{Name: "blackhole-up", Type: "timeout", Stream: toUpstream, Attributes: map[string]any{"timeout": 0}},
		toxic{Name: "blackhole-down", Type: "timeout", Stream: toDownstream, Attributes: map[string]any{"timeout": 0}})
}

// DropAnswers lets requests through to the upstream but drops every byte
// of its answers, closing no connection: the upstream acts, and the client
// never hears back.
func (p *Proxy) DropAnswers() error {
	return p.set("drop-answers",
		toxic{Name: "drop-answers", Type: "timeout", Stream: toDownstream, Attributes: map[string]any{"timeout": 0}})
}

// Reset cuts every connection as soon as an answer's first bytes arrive
// from the upstream: the request got there, its answer never does. A
// connection made after Reset is reset (TCP RST); one that existed before
// is closed.
func (p *Proxy) Reset() error {
	return p.set("reset",
		toxic{Name: "reset", Type: "reset_peer", Stream: toDownstream, Attributes: map[string]any{"timeout": 0}})
}

// Refuse stops listening and closes every existing connection: new
// connections are refused until Heal.
func (p *Proxy) Refuse() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("faultproxy: refuse on a closed proxy")
	}
	if err := p.heal(); err != nil {
		return err
	}
	p.proxy.Stop()
	p.refused = true
	p.fault = "refuse"
	return nil
}

// Trickle lets answers through at about bytesPerSec bytes a second, in
// small pieces, on new and existing connections.
func (p *Proxy) Trickle(bytesPerSec int) error {
	if bytesPerSec <= 0 {
		return fmt.Errorf("faultproxy: trickle: %d bytes a second: want more than 0", bytesPerSec)
	}
	// Pieces of a tenth of the rate every 100 ms (at least a byte).
	piece := max(1, bytesPerSec/10)
	delay := time.Duration(piece) * time.Second / time.Duration(bytesPerSec)
	return p.set("trickle", toxic{Name: "trickle", Type: "slicer", Stream: toDownstream,
		Attributes: map[string]any{"average_size": piece, "size_variation": 0, "delay": delay.Microseconds()}})
}

// Truncate closes each connection once n bytes of answers went through it
// (counted from when the fault went on, for an existing connection): an
// answer longer than that arrives cut.
func (p *Proxy) Truncate(n int) error {
	if n < 0 {
		return fmt.Errorf("faultproxy: truncate: %d bytes: want 0 or more", n)
	}
	return p.set("truncate", toxic{Name: "truncate", Type: "limit_data", Stream: toDownstream,
		Attributes: map[string]any{"bytes": n}})
}

// Close stops listening, closes every connection and takes every fault
// off; the proxy cannot be used again.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	for _, name := range p.toxics {
		_ = p.proxy.Toxics.RemoveToxic(context.Background(), name)
	}
	p.toxics = nil
	p.proxy.Stop()
	return nil
}
