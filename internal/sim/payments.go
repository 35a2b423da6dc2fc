// Package sim holds simulated dependencies that toolgate calls in its demo,
// its examples and its tests. They are real HTTP servers on 127.0.0.1, with
// the failure modes of real providers.
package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Payments is a simulated payment provider: orders, refunds, and the
// slowness of the refund incident. A refund is made when its processing
// finishes, whether or not the client is still waiting for the answer.
type Payments struct {
	// HonourKeys makes the provider answer a repeated Idempotency-Key with
	// the first request's refund instead of making a new one.
	HonourKeys bool
	// Delays is how long each POST /refunds takes, in arrival order; later
	// requests take the last delay (none when empty).
	Delays []time.Duration
	// Hold, when set, is waited on by the n-th POST /refunds (0-based)
	// before it is processed; nil channels do not wait. Tests use it instead
	// of delays.
	Hold func(n int) <-chan struct{}

	mu       sync.Mutex
	orders   map[string]Order
	refunds  []Refund
	requests int
	reads    int
	keys     map[string]*pending
}

// Order is an order the provider knows.
type Order struct {
	OrderID     string `json:"order_id"`
	CustomerID  string `json:"customer_id"`
	AmountPaise int64  `json:"amount_paise"`
}

// Refund is one refund the provider made.
type Refund struct {
	RefundID    string    `json:"refund_id"`
	OrderID     string    `json:"order_id"`
	AmountPaise int64     `json:"amount_paise"`
	Status      string    `json:"status"`
	Key         string    `json:"-"`
	At          time.Time `json:"-"`
}

type pending struct {
	done   chan struct{}
	refund Refund
}

// NewPayments returns a provider holding the given orders.
func NewPayments(orders ...Order) *Payments {
	p := &Payments{orders: map[string]Order{}, keys: map[string]*pending{}}
	for _, o := range orders {
		p.orders[o.OrderID] = o
	}
	return p
}

// Counts is what the provider saw.
type Counts struct {
	// Requests counts POST /refunds requests received.
	Requests int `json:"requests"`
	// Refunds counts refunds made.
	Refunds int `json:"refunds"`
	// PaidPaise is the money refunded.
	PaidPaise int64 `json:"paid_paise"`
	// Reads counts GET requests.
	Reads int `json:"reads"`
}

// Counts returns what the provider has seen so far.
func (p *Payments) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := Counts{Requests: p.requests, Refunds: len(p.refunds), Reads: p.reads}
	for _, r := range p.refunds {
		c.PaidPaise += r.AmountPaise
	}
	return c
}

// Refunds returns the refunds made so far.
func (p *Payments) Refunds() []Refund {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Refund(nil), p.refunds...)
}

// ServeHTTP implements http.Handler:
//
//	GET  /orders/{id}          the order, or 404
//	GET  /orders/{id}/refunds  {"order_id", "refunds": [...]}
//	POST /refunds              {"order_id", "amount_paise", "reason"} -> the refund
func (p *Payments) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(path, "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "orders":
		p.getOrder(w, parts[1])
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "orders" && parts[2] == "refunds":
		p.listRefunds(w, parts[1])
	case r.Method == http.MethodPost && path == "refunds":
		p.createRefund(w, r)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint: " + r.Method + " " + r.URL.Path})
	}
}

func (p *Payments) getOrder(w http.ResponseWriter, id string) {
	o, ok := p.order(id)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "order " + id + " not found"})
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (p *Payments) listRefunds(w http.ResponseWriter, id string) {
	writeJSON(w, http.StatusOK, p.refundsOf(id))
}

// order is the order id, if there is one; a read, counted (both faces).
func (p *Payments) order(id string) (Order, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	o, ok := p.orders[id]
	return o, ok
}

// refundsOf is the answer of list_refunds for the order id: its refunds;
// a read, counted (both faces).
func (p *Payments) refundsOf(id string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	list := []Refund{}
	for _, r := range p.refunds {
		if r.OrderID == id {
			list = append(list, r)
		}
	}
	return map[string]any{"order_id": id, "refunds": list}
}

func (p *Payments) createRefund(w http.ResponseWriter, r *http.Request) {
	var req struct {
		OrderID     string `json:"order_id"`
		AmountPaise int64  `json:"amount_paise"`
		Reason      string `json:"reason"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OrderID == "" || req.AmountPaise <= 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {order_id, amount_paise > 0}"})
		return
	}
	ref, status, msg := p.refund(req.OrderID, req.AmountPaise, r.Header.Get("Idempotency-Key"), r.Context().Done())
	if status == 0 {
		return // the client gave up waiting for the first request's outcome
	}
	if status != http.StatusOK {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	writeJSON(w, http.StatusOK, ref)
}

// refund makes one refund, the same over HTTP and MCP: key is the request's
// idempotency key (honoured when HonourKeys is set), gone closes when the
// client stops waiting. status is 200 with the refund, 404 with a message,
// or 0 when the client gave up waiting for another request's refund.
// Processing does not stop when the client stops waiting: that is the
// whole incident.
func (p *Payments) refund(orderID string, amount int64, key string, gone <-chan struct{}) (Refund, int, string) {
	p.mu.Lock()
	n := p.requests
	p.requests++
	if _, ok := p.orders[orderID]; !ok && len(p.orders) > 0 {
		p.mu.Unlock()
		return Refund{}, http.StatusNotFound, "order " + orderID + " not found"
	}
	if p.HonourKeys && key != "" {
		if pd, ok := p.keys[key]; ok {
			p.mu.Unlock()
			select {
			case <-pd.done:
				return pd.refund, http.StatusOK, ""
			case <-gone:
				return Refund{}, 0, ""
			}
		}
	}
	pd := &pending{done: make(chan struct{})}
	if p.HonourKeys && key != "" {
		p.keys[key] = pd
	}
	delay := time.Duration(0)
	if len(p.Delays) > 0 {
		delay = p.Delays[min(n, len(p.Delays)-1)]
	}
	p.mu.Unlock()

	if p.Hold != nil {
		if ch := p.Hold(n); ch != nil {
			<-ch
		}
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	p.mu.Lock()
	ref := Refund{RefundID: fmt.Sprintf("RF-%05d", 99203+len(p.refunds)), OrderID: orderID,
		AmountPaise: amount, Status: "settled", Key: key, At: time.Now()}
	p.refunds = append(p.refunds, ref)
	pd.refund = ref
	close(pd.done)
	p.mu.Unlock()
	return ref, http.StatusOK, ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
