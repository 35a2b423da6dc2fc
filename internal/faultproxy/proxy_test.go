package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echo is a real TCP server that writes back every byte it reads and
// counts them.
type echo struct {
	ln       net.Listener
	received atomic.Int64
	reads    chan struct{} // a token after every read that got bytes
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startEcho(t *testing.T) *echo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echo{ln: ln, reads: make(chan struct{}, 1)}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					e.received.Add(int64(n))
					if n > 0 {
						select {
						case e.reads <- struct{}{}:
						default:
						}
					}
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

// setup starts an echo server and a proxy in front of it.
func setup(t *testing.T) (*Proxy, *echo) {
	t.Helper()
	e := startEcho(t)
	p, err := Start(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, e
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg and reads len(msg) bytes back within wait.
func roundTrip(c net.Conn, msg []byte, wait time.Duration) ([]byte, error) {
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return nil, err
	}
	got := make([]byte, len(msg))
	n, err := io.ReadFull(c, got)
	return got[:n], err
}

// mustEcho fails unless a new connection through p echoes.
func mustEcho(t *testing.T, p *Proxy) {
	t.Helper()
	got, err := roundTrip(dial(t, p), []byte("after heal"), 10*time.Second)
	if err != nil || string(got) != "after heal" {
		t.Fatalf("after heal: got %q, %v; want the echo", got, err)
	}
}

func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

func TestHealthyProxyEchoes(t *testing.T) {
	p, _ := setup(t)
	got, err := roundTrip(dial(t, p), []byte("hello"), 10*time.Second)
	if err != nil || string(got) != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	if p.Fault() != "" {
		t.Fatalf("Fault() = %q on a new proxy", p.Fault())
	}
}

// The faults that hold an answer back: a read with a short deadline times
// out, and the request did (or did not) reach the upstream.
func TestFaultsThatHoldAnswersBack(t *testing.T) {
	tests := []struct {
		name        string
		apply       func(*Proxy) error
		reachesPeer bool
	}{
		{"latency", func(p *Proxy) error { return p.Latency(time.Minute) }, true},
		{"blackhole", (*Proxy).Blackhole, false},
		{"drop-answers", (*Proxy).DropAnswers, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := setup(t)
			existing := dial(t, p)
			if _, err := roundTrip(existing, []byte("warm"), 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := tt.apply(p); err != nil {
				t.Fatal(err)
			}
			if p.Fault() != tt.name {
				t.Fatalf("Fault() = %q, want %q", p.Fault(), tt.name)
			}
			fresh := dial(t, p) // accepted even now
			for _, c := range []net.Conn{existing, fresh} {
				before := e.received.Load()
				got, err := roundTrip(c, []byte("ping"), 300*time.Millisecond)
				if !isTimeout(err) {
					t.Fatalf("read during %s: got %q, %v; want a timeout", tt.name, got, err)
				}
				if tt.reachesPeer {
					e.waitReceived(t, before+4)
				} else if n := e.received.Load(); n != before {
					t.Fatalf("the upstream got %d bytes during %s, want none", n-before, tt.name)
				}
			}
			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}
			mustEcho(t, p)
		})
	}
}

// waitReceived waits until the upstream got n bytes in all, for up to 10 s.
func (e *echo) waitReceived(t *testing.T, n int64) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for e.received.Load() < n {
		select {
		case <-e.reads:
		case <-timeout:
			t.Fatalf("the upstream got %d bytes, want %d", e.received.Load(), n)
		}
	}
}

func TestResetCutsTheAnswer(t *testing.T) {
	p, _ := setup(t)
	existing := dial(t, p)
	if _, err := roundTrip(existing, []byte("warm"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{"existing": existing, "new": dial(t, p)} {
		got, err := roundTrip(c, []byte("ping"), 10*time.Second)
		if err == nil || isTimeout(err) || len(got) != 0 {
			t.Fatalf("%s connection: got %q, %v; want it closed or reset with no byte", name, got, err)
		}
	}
	// A new connection is reset, not just closed.
	_, err := roundTrip(dial(t, p), []byte("ping"), 10*time.Second)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("new connection: %v, want ECONNRESET", err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	mustEcho(t, p)
}

func TestRefuseStopsListening(t *testing.T) {
	p, _ := setup(t)
	addr := p.Addr()
	existing := dial(t, p)
	if err := p.Refuse(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial during refuse: %v, want ECONNREFUSED", err)
	}
	if got, err := roundTrip(existing, []byte("ping"), 10*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("existing connection during refuse: got %q, %v; want it closed", got, err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if p.Addr() != addr {
		t.Fatalf("address moved from %s to %s", addr, p.Addr())
	}
	mustEcho(t, p)
}

func TestTrickleSendsSmallPieces(t *testing.T) {
	p, _ := setup(t)
	c := dial(t, p)
	if err := p.Trickle(100); err != nil { // 10-byte pieces every 100 ms
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("x"), 50)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	reads, total := 0, 0
	buf := make([]byte, 100)
	for total < len(msg) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes: %v", total, err)
		}
		if n > 10*2 {
			t.Fatalf("a read of %d bytes: the trickle sends pieces of 10", n)
		}
		reads++
		total += n
	}
	if reads < 2 {
		t.Fatalf("50 bytes in %d read: not trickled", reads)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	mustEcho(t, p)
	if err := p.Trickle(0); err == nil {
		t.Fatal("Trickle(0) took no error")
	}
}

func TestTruncateCutsAfterNBytes(t *testing.T) {
	p, _ := setup(t)
	if err := p.Truncate(10); err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	if _, err := c.Write(bytes.Repeat([]byte("y"), 50)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if len(got) != 10 || isTimeout(err) {
		t.Fatalf("read %d bytes (%v), want exactly 10 then the end", len(got), err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	mustEcho(t, p)
}

func TestClosedProxyRefusesFaults(t *testing.T) {
	p, _ := setup(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Latency(time.Second); err == nil {
		t.Fatal("a fault on a closed proxy took no error")
	}
	if err := p.Heal(); err != nil || p.Close() != nil {
		t.Fatal("Heal and Close on a closed proxy must be no-ops")
	}
}
