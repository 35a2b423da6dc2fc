package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
)

// crashProvider is the fake payment provider of the crash test: the sim's
// refunds (Idempotency-Key honoured, only refund_keyed sends one), a random
// processing time per refund, and a count of open connections so the test
// can wait until the dead process's requests have all been processed.
type crashProvider struct {
	*sim.Payments
	srv  *httptest.Server
	fast atomic.Bool // no processing time (while settling)

	mu      sync.Mutex
	rng     *rand.Rand
	open    map[string]bool // remote addresses of open connections
	changed chan struct{}
}

func startCrashProvider(t *testing.T, seed uint64) *crashProvider {
	t.Helper()
	orders := make([]sim.Order, 0, crashMaxOrders)
	for i := 1; i <= crashMaxOrders; i++ {
		orders = append(orders, sim.Order{OrderID: fmt.Sprintf("ORD-%d", i), CustomerID: "cust_42", AmountPaise: 1 << 40})
	}
	p := &crashProvider{Payments: sim.NewPayments(orders...), rng: rand.New(rand.NewPCG(seed, 1)),
		open: map[string]bool{}, changed: make(chan struct{})}
	p.HonourKeys = true
	p.Hold = p.hold
	p.srv = httptest.NewUnstartedServer(p.Payments)
	p.srv.Config.ConnState = p.connState
	p.srv.Start()
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

func (p *crashProvider) URL() string { return p.srv.URL }

// made says whether a refund of order was made.
func (p *crashProvider) made(order string) bool {
	for _, r := range p.Refunds() {
		if r.OrderID == order {
			return true
		}
	}
	return false
}

// hold is the refund's processing time: mostly short, sometimes beyond the
// tools' 300ms read timeout (the answer is lost, the refund still made).
func (p *crashProvider) hold(int) <-chan struct{} {
	if p.fast.Load() {
		return nil
	}
	p.mu.Lock()
	var d time.Duration
	switch x := p.rng.IntN(100); {
	case x < 50:
		d = time.Duration(p.rng.Int64N(int64(30 * time.Millisecond)))
	case x < 85:
		d = 30*time.Millisecond + time.Duration(p.rng.Int64N(int64(170*time.Millisecond)))
	default:
		d = 310*time.Millisecond + time.Duration(p.rng.Int64N(int64(90*time.Millisecond)))
	}
	p.mu.Unlock()
	ch := make(chan struct{})
	time.AfterFunc(d, func() { close(ch) })
	return ch
}

func (p *crashProvider) connState(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.open[c.RemoteAddr().String()] = true
	case http.StateClosed, http.StateHijacked:
		delete(p.open, c.RemoteAddr().String())
	default:
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// waitFor waits until cond holds over the open connections.
func (p *crashProvider) waitFor(t *testing.T, seed uint64, what string, cond func(open map[string]bool) bool) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		p.mu.Lock()
		ok, ch := cond(p.open), p.changed
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("seed %d: the provider did not %s within a minute", seed, what)
		}
	}
}

// waitIdle returns once every request of a dead client has been processed:
// a connection of its own, once accepted, proves every earlier connection
// in the listen queue was accepted too; a request's handler ends before its
// connection closes; so no open connection means nothing left to process.
func (p *crashProvider) waitIdle(t *testing.T, seed uint64) {
	t.Helper()
	conn, err := net.Dial("tcp", p.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	mine := conn.LocalAddr().String()
	p.waitFor(t, seed, "accept a connection", func(open map[string]bool) bool { return open[mine] })
	conn.Close()
	p.waitFor(t, seed, "finish the dead process's requests", func(open map[string]bool) bool { return len(open) == 0 })
}
