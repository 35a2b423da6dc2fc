package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy is one TCP proxy from Addr to an upstream address, with at most
// one fault on at a time. Its methods are safe for concurrent use.
type Proxy struct {
	upstream string
	addr     string
	wg       sync.WaitGroup // the accept loop and every connection's pumps

	mu      sync.Mutex
	ln      net.Listener // nil while refused or closed
	conns   map[*link]struct{}
	fault   fault
	closed  bool
	changed chan struct{} // closed and replaced when the fault changes
}

// fault is the fault on now; the zero value is none.
type fault struct {
	name    string
	gen     int           // counts fault changes, so a link notices a new one
	latency time.Duration // answers wait this long
	dropUp  bool          // requests are dropped
	dropDn  bool          // answers are dropped
	reset   bool          // the first answer bytes reset the connection
	trickle int           // answers go at this many bytes a second
	limit   int           // answers stop, and the connection closes, after this many bytes
	limited bool          // limit is on (0 bytes is a limit too)
}

// Start listens on 127.0.0.1 on a free port and forwards every connection
// it accepts to upstream ("host:port"), with no fault on.
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{upstream: upstream, addr: ln.Addr().String(), conns: map[*link]struct{}{}, changed: make(chan struct{})}
	p.serve(ln)
	return p, nil
}

// serve starts the accept loop on ln; p.mu is held or p is new.
func (p *Proxy) serve(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Refuse or Close
			}
			p.accept(c)
		}
	}()
}

// accept connects a client to the upstream and starts the pumps.
func (p *Proxy) accept(client net.Conn) {
	up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	l := &link{p: p, client: client, up: up, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed || p.ln == nil {
		p.mu.Unlock()
		l.close(false)
		return
	}
	p.conns[l] = struct{}{}
	p.wg.Add(2)
	p.mu.Unlock()
	go l.pump(up, client, false)
	go l.pump(client, up, true)
}

// Addr is the address the proxy listens on ("127.0.0.1:port"); it stays
// the same across Refuse and Heal.
func (p *Proxy) Addr() string { return p.addr }

// Fault names the fault on now ("latency", "blackhole", "drop-answers",
// "reset", "refuse", "trickle", "truncate"), or "" when healthy.
func (p *Proxy) Fault() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault.name
}

// current is the fault on now and a channel closed when it changes.
func (p *Proxy) current() (fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault, p.changed
}

// set heals the proxy and puts f on.
func (p *Proxy) set(f fault) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("faultproxy: %s on a closed proxy", f.name)
	}
	if err := p.heal(); err != nil {
		return err
	}
	f.gen = p.fault.gen + 1
	p.fault = f
	p.notify()
	return nil
}

// notify wakes the links waiting on the fault; p.mu is held.
func (p *Proxy) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// heal takes the fault off; p.mu is held. Connections that lost bytes
// (a blackhole, dropped answers) are closed: nothing may reuse them.
func (p *Proxy) heal() error {
	old := p.fault
	if old.dropUp || old.dropDn {
		for l := range p.conns {
			go l.close(false)
		}
	}
	if p.ln == nil && !p.closed {
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			return fmt.Errorf("faultproxy: heal: listen again on %s: %w", p.addr, err)
		}
		p.serve(ln)
	}
	p.fault = fault{gen: old.gen + 1}
	p.notify()
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
	return p.set(fault{name: "latency", latency: d})
}

// Blackhole keeps accepting connections but carries no byte either way,
// on new and existing connections: requests never reach the upstream and
// nothing comes back, and no connection is closed.
func (p *Proxy) Blackhole() error {
	return p.set(fault{name: "blackhole", dropUp: true, dropDn: true})
}

// DropAnswers lets requests through to the upstream but drops every byte
// of its answers, closing no connection: the upstream acts, and the client
// never hears back.
func (p *Proxy) DropAnswers() error {
	return p.set(fault{name: "drop-answers", dropDn: true})
}

// Reset resets (TCP RST) every connection, new or existing, as soon as an
// answer's first bytes arrive from the upstream: the request got there,
// its answer never does.
func (p *Proxy) Reset() error {
	return p.set(fault{name: "reset", reset: true})
}

// Refuse stops listening and closes every existing connection: new
// connections are refused until Heal.
func (p *Proxy) Refuse() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("faultproxy: refuse on a closed proxy")
	}
	if err := p.heal(); err != nil {
		return err
	}
	p.ln.Close()
	p.ln = nil
	for l := range p.conns {
		go l.close(false)
	}
	p.fault = fault{name: "refuse", gen: p.fault.gen + 1}
	p.notify()
	return nil
}

// Trickle lets answers through at about bytesPerSec bytes a second, in
// small pieces, on new and existing connections.
func (p *Proxy) Trickle(bytesPerSec int) error {
	if bytesPerSec <= 0 {
		return fmt.Errorf("faultproxy: trickle: %d bytes a second: want more than 0", bytesPerSec)
	}
	return p.set(fault{name: "trickle", trickle: bytesPerSec})
}

// Truncate closes each connection once n bytes of answers went through it
// (counted from when the fault went on, for an existing connection): an
// answer longer than that arrives cut.
func (p *Proxy) Truncate(n int) error {
	if n < 0 {
		return fmt.Errorf("faultproxy: truncate: %d bytes: want 0 or more", n)
	}
	return p.set(fault{name: "truncate", limit: n, limited: true})
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end; the proxy cannot be used again.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for l := range p.conns {
		go l.close(false)
	}
	p.fault = fault{gen: p.fault.gen + 1}
	p.notify()
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}
