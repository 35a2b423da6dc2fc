package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// The simulated provider, as `toolgate sim payments` serves it: with
// --honour-keys a repeated Idempotency-Key answers the first refund (one
// refund made); without it, every request is a new refund.
func TestSimPayments(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		summary string
	}{
		{"honours keys", []string{"--honour-keys"}, "refund requests received: 2, refunds made: 1, paid: 300 paise"},
		{"ignores keys", nil, "refund requests received: 2, refunds made: 2, paid: 600 paise"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stderr := simRefundTwice(t, c.flags)
			if !strings.Contains(stderr, c.summary) {
				t.Errorf("want %q in the summary: %s", c.summary, stderr)
			}
		})
	}
}

// simRefundTwice runs the simulator, asks for one order, sends the same
// refund twice under one Idempotency-Key, stops it and returns its
// standard error.
func simRefundTwice(t *testing.T, flags []string) string {
	found := make(chan string, 1)
	stdout := &prefixWatcher{prefix: "payments simulator listening on ", found: found}
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, &env{stdout: stdout, stderr: &stderr, getenv: os.Getenv},
			append([]string{"sim", "payments", "--listen", "127.0.0.1:0", "--orders", "ORD-1:cust_1:1000,ORD-2:cust_2:500"}, flags...))
	}()
	var base string
	select {
	case base = <-found:
	case code := <-exit:
		t.Fatalf("sim exited %d: %s", code, stderr.String())
	}
	base = strings.TrimSpace(base)

	resp, err := http.Get(base + "/orders/ORD-2")
	if err != nil {
		t.Fatal(err)
	}
	var order struct {
		CustomerID string `json:"customer_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&order)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || order.CustomerID != "cust_2" {
		t.Errorf("GET /orders/ORD-2: %d %+v", resp.StatusCode, order)
	}
	for range 2 { // the same key twice
		req, _ := http.NewRequest(http.MethodPost, base+"/refunds", strings.NewReader(`{"order_id":"ORD-1","amount_paise":300}`))
		req.Header.Set("Idempotency-Key", "k1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("POST /refunds: %d", resp.StatusCode)
		}
	}
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return stderr.String()
}

func TestSimUsage(t *testing.T) {
	for _, args := range [][]string{
		{"sim"},
		{"sim", "bank"},
		{"sim", "payments", "--slow", "fast"},
		{"sim", "payments", "--orders", "ORD-1:cust_1"},
		{"sim", "payments", "extra"},
	} {
		var out syncBuffer
		if code := run(context.Background(), &env{stdout: &out, stderr: &out, getenv: os.Getenv}, args); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, out.String())
		}
	}
}

func TestParseDelays(t *testing.T) {
	d, err := parseDelays("9s, 7s,2.7s")
	if err != nil || len(d) != 3 || d[2].Milliseconds() != 2700 {
		t.Errorf("parseDelays: %v %v", d, err)
	}
}
