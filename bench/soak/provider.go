package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Faults are the provider's failure rates, drawn independently for every
// POST (a write); reads never fail.
type Faults struct {
	// Slow is the share of new refunds that take SlowDelay: the refund is
	// made when the delay ends, whether or not the client still waits.
	Slow float64
	// SlowDelay is how long a slow refund takes.
	SlowDelay time.Duration
	// Unavailable is the share of requests answered 503 at once, with
	// nothing done (the provider declined to process).
	Unavailable float64
	// Reset is the share of requests whose connection is closed without an
	// answer after the request was read: half before anything is done,
	// half after the refund was made (the client cannot tell which).
	Reset float64
}

// Fate is what the provider did with one POST.
type Fate string

// The fates of a POST.
const (
	FateOK          Fate = "ok"           // refund made, answered 200
	FateSlow        Fate = "slow"         // refund made after SlowDelay, then answered
	FateUnavailable Fate = "unavailable"  // 503, nothing done
	FateResetBefore Fate = "reset_before" // connection closed, nothing done
	FateResetAfter  Fate = "reset_after"  // refund made, connection closed
	FateKeyReplay   Fate = "key_replay"   // repeated Idempotency-Key: the first refund's answer
	FateKeyGaveUp   Fate = "key_gave_up"  // repeated key of a refund in progress; the client left first
	FateBadRequest  Fate = "bad_request"  // not a refund request
)

// Provider is the soak's fake payment provider, a real HTTP server on
// 127.0.0.1:
//
//	POST /keyed/refunds        honours Idempotency-Key (a repeat answers the first refund)
//	POST /plain/refunds        ignores it: every request that gets through makes a refund
//	GET  /orders/{id}/refunds  {"order_id", "refunds": [{"refund_id", "amount_paise"}]}
//
// Every refund is an effect of its order; the soak gives each operation its
// own order, so Effects counts the effects of each operation. A request may
// carry X-Soak-Call (the textbook loop's call number) so that effects can be
// attributed to calls.
type Provider struct {
	// URL is the provider's base URL.
	URL string

	srv *http.Server

	mu     sync.Mutex
	rng    *rand.Rand
	faults Faults
	orders map[string]*OrderLog
	keys   map[string]*keyed
	serial int
	active int           // handlers running
	idle   chan struct{} // closed when active next drops to 0
	reads  int
	posts  int
	byFate map[Fate]int
}

// OrderLog is what the provider did for one order.
type OrderLog struct {
	// Effects is the number of refunds made.
	Effects int
	// Requests counts the POSTs received.
	Requests int
	// Fates counts what each POST met.
	Fates map[Fate]int
	// Amounts lists the amount of each refund, in the order made.
	Amounts []int64
	// Calls lists, for each refund, the X-Soak-Call of the request that
	// made it ("" when absent).
	Calls []string
}

type keyed struct {
	done   chan struct{}
	answer []byte
}

// StartProvider starts a provider with the given faults and random seed.
func StartProvider(faults Faults, seed uint64) (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Provider{
		URL: "http://" + ln.Addr().String(), rng: rand.New(rand.NewPCG(seed, seed^0x5eed)),
		faults: faults, orders: map[string]*OrderLog{}, keys: map[string]*keyed{}, byFate: map[Fate]int{},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Calm turns every fault off: from now on each request is answered at once.
func (p *Provider) Calm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = Faults{}
}

// WaitIdle waits until no request is being handled: every slow refund has
// been made. Use it once no client sends any more.
func (p *Provider) WaitIdle(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.active == 0 {
			p.mu.Unlock()
			return nil
		}
		if p.idle == nil {
			p.idle = make(chan struct{})
		}
		ch := p.idle
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("provider still handling %d request(s): %w", p.Active(), ctx.Err())
		}
	}
}

// Active is the number of requests being handled.
func (p *Provider) Active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active
}

// Close stops accepting, waits for the requests being handled (slow
// refunds included), and closes the server.
func (p *Provider) Close(ctx context.Context) error {
	err := p.srv.Shutdown(ctx)
	if werr := p.WaitIdle(ctx); err == nil {
		err = werr
	}
	return err
}

// Orders returns a copy of the log of every order the provider saw.
func (p *Provider) Orders() map[string]OrderLog {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]OrderLog, len(p.orders))
	for id, o := range p.orders {
		c := *o
		c.Fates = make(map[Fate]int, len(o.Fates))
		for f, n := range o.Fates {
			c.Fates[f] = n
		}
		c.Calls = append([]string(nil), o.Calls...)
		c.Amounts = append([]int64(nil), o.Amounts...)
		out[id] = c
	}
	return out
}

// Totals are the provider's counters.
type Totals struct {
	Posts  int          `json:"posts"`
	Reads  int          `json:"reads"`
	ByFate map[Fate]int `json:"by_fate"`
}

// Totals returns the provider's counters.
func (p *Provider) Totals() Totals {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := Totals{Posts: p.posts, Reads: p.reads, ByFate: map[Fate]int{}}
	for f, n := range p.byFate {
		t.ByFate[f] = n
	}
	return t
}

func (p *Provider) enter() {
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
}

func (p *Provider) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active--; p.active == 0 && p.idle != nil {
		close(p.idle)
		p.idle = nil
	}
}

// ServeHTTP implements http.Handler.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.enter()
	defer p.leave()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "orders" && parts[2] == "refunds":
		p.listRefunds(w, parts[1])
	case r.Method == http.MethodPost && len(parts) == 2 && parts[1] == "refunds" && (parts[0] == "keyed" || parts[0] == "plain"):
		p.refund(w, r, parts[0] == "keyed")
	default:
		writeJSON(w, http.StatusNotFound, []byte(`{"error":"no such endpoint"}`))
	}
}

type refund struct {
	RefundID    string `json:"refund_id"`
	OrderID     string `json:"order_id"`
	AmountPaise int64  `json:"amount_paise"`
}

func (p *Provider) listRefunds(w http.ResponseWriter, order string) {
	p.mu.Lock()
	p.reads++
	list := []refund{}
	if o := p.orders[order]; o != nil {
		for i, amount := range o.Amounts {
			list = append(list, refund{RefundID: fmt.Sprintf("RF-%s-%d", order, i+1), OrderID: order, AmountPaise: amount})
		}
	}
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"order_id": order, "refunds": list})
	writeJSON(w, http.StatusOK, b)
}

// refund is POST /keyed/refunds (honourKeys: a repeated Idempotency-Key
// gets the first request's answer) and POST /plain/refunds. Each request
// draws its fate: 503, a reset before or after the refund, slow, or ok.
func (p *Provider) refund(w http.ResponseWriter, r *http.Request, honourKeys bool) {
	req, err := readRefundRequest(r)
	if err != nil || req.OrderID == "" || req.AmountPaise <= 0 {
		p.count("", FateBadRequest)
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":"want {order_id, amount_paise > 0}"}`))
		return
	}
	key := ""
	if honourKeys {
		key = r.Header.Get("Idempotency-Key")
	}
	call := r.Header.Get("X-Soak-Call")

	p.mu.Lock()
	p.posts++
	o := p.orderLocked(req.OrderID)
	o.Requests++
	f := p.faults
	u := p.rng.Float64()
	switch {
	case u < f.Unavailable:
		p.fateLocked(o, FateUnavailable)
		p.mu.Unlock()
		writeJSON(w, http.StatusServiceUnavailable, []byte(`{"error":"temporarily unavailable"}`))
		return
	case u < f.Unavailable+f.Reset/2:
		p.fateLocked(o, FateResetBefore)
		p.mu.Unlock()
		reset(w)
		return
	}
	resetAfter := u < f.Unavailable+f.Reset
	slow := !resetAfter && u < f.Unavailable+f.Reset+f.Slow
	if k := p.keys[key]; key != "" && k != nil {
		p.mu.Unlock()
		p.replay(w, r, k, req.OrderID)
		return
	}
	k := &keyed{done: make(chan struct{})}
	if key != "" {
		p.keys[key] = k
	}
	p.mu.Unlock()

	// Processing does not stop when the client stops waiting: that is the
	// refund incident.
	if slow {
		time.Sleep(f.SlowDelay)
	}
	answer := p.effect(o, k, req, call, resetAfter, slow)
	if resetAfter {
		reset(w)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// orderLocked is the log of the order id, made on its first request. The
// caller holds p.mu.
func (p *Provider) orderLocked(id string) *OrderLog {
	o := p.orders[id]
	if o == nil {
		o = &OrderLog{Fates: map[Fate]int{}}
		p.orders[id] = o
	}
	return o
}

// replay answers a repeated key with the first request's answer, once
// that request has made it, unless the client gives up first.
func (p *Provider) replay(w http.ResponseWriter, r *http.Request, k *keyed, orderID string) {
	select {
	case <-k.done:
		p.count(orderID, FateKeyReplay)
		writeJSON(w, http.StatusOK, k.answer)
	case <-r.Context().Done():
		p.count(orderID, FateKeyGaveUp)
	}
}

// refundRequest is the body of a refund POST.
type refundRequest struct {
	OrderID     string `json:"order_id"`
	AmountPaise int64  `json:"amount_paise"`
}

// readRefundRequest reads and decodes r's body.
func readRefundRequest(r *http.Request) (refundRequest, error) {
	body, err := io.ReadAll(r.Body)
	var req refundRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	return req, err
}

// effect makes the refund of req for the order o, the call named call:
// it records the effect and its fate (reset after, slow or ok), answers
// every request waiting on k and returns the answer.
func (p *Provider) effect(o *OrderLog, k *keyed, req refundRequest, call string, resetAfter, slow bool) []byte {
	p.mu.Lock()
	o.Effects++
	o.Amounts = append(o.Amounts, req.AmountPaise)
	o.Calls = append(o.Calls, call)
	p.serial++
	answer, _ := json.Marshal(refund{RefundID: fmt.Sprintf("RF-%07d", p.serial), OrderID: req.OrderID, AmountPaise: req.AmountPaise})
	k.answer = answer
	close(k.done)
	fate := FateOK
	switch {
	case resetAfter:
		fate = FateResetAfter
	case slow:
		fate = FateSlow
	}
	p.fateLocked(o, fate)
	p.mu.Unlock()
	return answer
}

func (p *Provider) count(order string, f Fate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fateLocked(p.orders[order], f)
}

func (p *Provider) fateLocked(o *OrderLog, f Fate) {
	p.byFate[f]++
	if o != nil {
		o.Fates[f]++
	}
}

// reset closes the connection without an answer.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("soak: the provider's ResponseWriter cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a reset, not an orderly close
	}
	_ = conn.Close()
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
