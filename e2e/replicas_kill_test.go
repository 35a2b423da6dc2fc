package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// killProvider is the payment provider of the kill test. Every POST
// /refunds is held, and its answer never comes (the handler returns when
// the client goes away). The refunds of the orders given a gate are made
// once their gate is closed, whether or not the client is still there;
// the others are never made.
type killProvider struct {
	*sim.Payments
	srv     *httptest.Server
	posts   atomic.Int64
	arrived chan string
	gates   map[string]chan struct{}
	release map[string]func()
}

func startKillProvider(t *testing.T, orders []sim.Order, made []string) *killProvider {
	t.Helper()
	k := &killProvider{Payments: sim.NewPayments(orders...), arrived: make(chan string, 4*len(orders)),
		gates: map[string]chan struct{}{}, release: map[string]func(){}}
	for _, o := range made {
		ch := make(chan struct{})
		k.gates[o], k.release[o] = ch, sync.OnceFunc(func() { close(ch) })
	}
	k.srv = httptest.NewServer(k)
	t.Cleanup(func() {
		for _, r := range k.release {
			r()
		}
		k.srv.CloseClientConnections()
		k.srv.Close()
	})
	return k
}

func (k *killProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/refunds" {
		k.Payments.ServeHTTP(w, r)
		return
	}
	k.posts.Add(1)
	// The body is read to its end: only then does net/http cancel the
	// request's context when the client closes the connection.
	body, _ := io.ReadAll(r.Body)
	var req struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(body, &req)
	k.arrived <- req.OrderID
	if gate := k.gates[req.OrderID]; gate != nil {
		<-gate
		made := r.Clone(context.WithoutCancel(r.Context()))
		made.Body = io.NopCloser(bytes.NewReader(body))
		k.Payments.ServeHTTP(httptest.NewRecorder(), made)
	}
	<-r.Context().Done()
}

// waitArrived waits for the refunds of n calls to reach the provider.
func (k *killProvider) waitArrived(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for i := range n {
		select {
		case <-k.arrived:
		case <-timeout:
			t.Fatalf("only %d of %d refunds reached the provider within a minute", i, n)
		}
	}
}

// One replica is killed (SIGKILL) with 20 writes in flight, and the
// server is made to keep its liveness lock (as behind a network partition,
// when the server has not noticed the dead connection). Their
// operations stay started in the shared ledger until their leases end
// (deadline + --lease-margin); then replica B surfaces them as unknown,
// either when a repeat of the call meets the expired lease or by its
// background sweep alone, and its verify read settles each: found → ok,
// verified; not found → unknown_outcome. Nothing is ever sent again, so
// there are no duplicates downstream.
//
// The 20 operations, two groups of ten, each half made by the provider
// and half never processed:
//
//	R (ORD-2001..2010)  sent first. 2001-2005 are made before the kill
//	                    (their answers were lost with replica A).
//	                    Repeated on B while their leases still run: the
//	                    repeats wait, meet the lease's end, expire it and
//	                    verify.
//	S (ORD-2011..2020)  sent 4 s later, so their leases end 4 s after R's.
//	                    2011-2015 are made after the kill (the provider
//	                    finishes work whose client is gone). Not repeated
//	                    until B's background sweep alone has turned them
//	                    unknown; then repeated and verified.
//
// At the end each operation is repeated once more: a verified one replays,
// an unknown one verifies again and stays unknown; still nothing is sent.
func TestReplicaKilledMidWritesSettles(t *testing.T) {
	const (
		run    = "killed"
		margin = time.Second
		total  = 9 * time.Second // the write's deadline on every replica
		gap    = 4 * time.Second // between the two groups' calls
	)
	st, storeURL := replicaStore(t)

	type opCase struct {
		order  string
		amount int64
		made   bool // the provider makes it
		group  string
	}
	var cases []opCase
	var orders []sim.Order
	var madeOrders []string
	for i := range 20 {
		c := opCase{order: fmt.Sprintf("ORD-%d", 2001+i), amount: int64(1001 + i), made: i%10 < 5, group: "R"}
		if i >= 10 {
			c.group = "S"
		}
		cases = append(cases, c)
		orders = append(orders, sim.Order{OrderID: c.order, CustomerID: "cust_42", AmountPaise: 100000})
		if c.made {
			madeOrders = append(madeOrders, c.order)
		}
	}
	group := func(g string) (out []opCase) {
		for _, c := range cases {
			if c.group == g {
				out = append(out, c)
			}
		}
		return out
	}
	body := func(c opCase) string {
		return fmt.Sprintf(`{"tool":"issue_refund","args":{"order_id":%q,"amount_paise":%d}}`, c.order, c.amount)
	}
	ops := func() map[string]types.Operation {
		t.Helper()
		out := map[string]types.Operation{}
		for _, status := range []types.OpStatus{types.OpStarted, types.OpUnknown, types.OpCompleted} {
			list, err := st.ListOperations(t.Context(), status, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range list {
				out[op.Key] = op
			}
		}
		return out
	}
	key := func(c opCase) string { return replicaRefundKey(c.order, c.amount, run) }

	prov := startKillProvider(t, orders, madeOrders)
	cfg := replicaConfig(storeURL, prov.srv.URL, total)
	a := startServe(t, cfg, "--lease-margin", margin.String())
	if r := a.post("/v1/runs", supportKey, `{"run_id":"`+run+`","principal":`+principal+`,"state":{"refunded_paise":0}}`); r.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", r.status, r.body)
	}

	// 20 writes in flight on replica A, held by the provider.
	outcomesA := make(chan callOutcome, len(cases))
	for _, c := range group("R") {
		go sendCall(a.base, run, body(c), outcomesA)
	}
	prov.waitArrived(t, 10)
	for _, c := range group("R") {
		if c.made {
			prov.release[c.order]()
		}
	}
	replicaPoll(t, time.Minute, "the provider makes group R's 5 refunds", func() bool { return prov.Counts().Refunds == 5 })
	time.Sleep(gap)
	for _, c := range group("S") {
		go sendCall(a.base, run, body(c), outcomesA)
	}
	prov.waitArrived(t, 10)
	before := ops()
	inFlight := 0
	for _, c := range cases {
		if op, ok := before[key(c)]; ok && op.Status == types.OpStarted && op.Owner == before[key(cases[0])].Owner {
			inFlight++
		}
	}
	if inFlight != len(cases) {
		t.Fatalf("%d of %d operations started by replica A before the kill: %+v", inFlight, len(cases), before)
	}

	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(time.Minute):
		t.Fatal("replica A did not die")
	}
	// The server keeps A's session, as behind a partition: B cannot see
	// that A died (failover_test.go covers the case where it can), and the
	// leases alone settle A's operations.
	holdLivenessLock(t, st.Schema(), before[key(cases[0])].Owner)
	killed := 0
	for range cases {
		if o := <-outcomesA; o.err != nil {
			killed++
		} else {
			t.Errorf("a call on the killed replica was answered: HTTP %d %+v", o.status, o.res)
		}
	}
	// The provider finishes group S's held work although its client died.
	for _, c := range group("S") {
		if c.made {
			prov.release[c.order]()
		}
	}
	replicaPoll(t, time.Minute, "the provider makes group S's 5 refunds", func() bool { return prov.Counts().Refunds == 10 })
	for _, op := range ops() {
		if op.Status != types.OpStarted {
			t.Fatalf("operation %s is %s though no replica is alive to change it", op.Key, op.Status)
		}
	}

	b := startServe(t, cfg, "--lease-margin", margin.String())

	// Each call's answer on B, checked against what the provider holds.
	settled := map[string]types.Code{}
	check := func(c opCase, o callOutcome, wantReplayed bool) {
		t.Helper()
		if o.err != nil || o.status != http.StatusOK {
			t.Errorf("%s on replica B: HTTP %d %v", c.order, o.status, o.err)
			return
		}
		res := o.res
		settled[c.order] = res.Code()
		if c.made {
			ref := replicaRefundOf(res)
			if !res.OK || !res.Meta.Verified || res.Meta.Replayed != wantReplayed || ref.OrderID != c.order || ref.AmountPaise != c.amount {
				t.Errorf("%s (made): got %s verified=%v replayed=%v data %s, want ok verified replayed=%v\n%s",
					c.order, res.Code(), res.Meta.Verified, res.Meta.Replayed, res.Data, wantReplayed, res.Observation)
			}
			return
		}
		if res.Code() != types.CodeUnknownOutcome || res.Meta.SideEffect != types.SideEffectUnknown {
			t.Errorf("%s (never made): got %s side_effect=%s, want unknown_outcome unknown\n%s",
				c.order, res.Code(), res.Meta.SideEffect, res.Observation)
		}
	}
	repeat := func(cs []opCase, wantReplayed bool) {
		t.Helper()
		out := make([]chan callOutcome, len(cs))
		for i, c := range cs {
			out[i] = make(chan callOutcome, 1)
			go sendCall(b.base, run, body(c), out[i])
		}
		for i, c := range cs {
			check(c, <-out[i], wantReplayed)
		}
	}

	// Group R: the model's repeats reach B while A's leases still run. Each
	// waits for the dead owner and must still have time to verify once the
	// lease ends, so it is sent at least 3 s after the owner's call began.
	var leaseR time.Time
	for _, c := range group("R") {
		if l := before[key(c)].LeaseUntil; l.After(leaseR) {
			leaseR = l
		}
	}
	if wait := time.Until(leaseR.Add(3*time.Second - total)); wait > 0 {
		time.Sleep(wait)
	}
	repeat(group("R"), false)
	surfacedR := 0 // answered by the verify read: the operation was unknown
	for _, c := range group("R") {
		if code := settled[c.order]; code == types.CodeOK || code == types.CodeUnknownOutcome {
			surfacedR++
		}
	}
	afterR := ops()
	checked := time.Now()
	// No lease is ever ended early; a group S operation whose lease had
	// not ended yet is still started, left to the sweep.
	toSweep := 0
	for _, c := range group("S") {
		op := afterR[key(c)]
		if op.LeaseUntil.After(checked) && op.Status != types.OpStarted {
			t.Errorf("%s is %s before its lease ended (%s)", op.Key, op.Status, op.LeaseUntil.Format(time.RFC3339Nano))
		}
		if op.Status == types.OpStarted {
			toSweep++
		}
	}

	// Group S: nobody calls; B's background sweep (every 15 s) alone turns
	// them unknown once their leases end.
	replicaPoll(t, 45*time.Second, "the background sweep turns group S unknown", func() bool {
		now := ops()
		for _, c := range group("S") {
			if now[key(c)].Status != types.OpUnknown {
				return false
			}
		}
		return true
	})
	repeat(group("S"), false)

	// Once more, everything: verified operations replay, unknown ones
	// verify again. Nothing is sent.
	for _, c := range cases {
		prev := settled[c.order]
		out := make(chan callOutcome, 1)
		sendCall(b.base, run, body(c), out)
		check(c, <-out, c.made)
		if settled[c.order] != prev {
			t.Errorf("%s: %s, then %s", c.order, prev, settled[c.order])
		}
	}

	// The counts.
	final := ops()
	found, unknown, completedOps, unknownOps := 0, 0, 0, 0
	for _, c := range cases {
		switch settled[c.order] {
		case types.CodeOK:
			found++
		case types.CodeUnknownOutcome:
			unknown++
		}
		switch final[key(c)].Status {
		case types.OpCompleted:
			completedOps++
		case types.OpUnknown:
			unknownOps++
		}
	}
	perOrder := map[string]int{}
	var paid int64
	for _, r := range prov.Refunds() {
		perOrder[r.OrderID]++
		paid += r.AmountPaise
	}
	duplicates := 0
	for _, k := range perOrder {
		duplicates += k - 1
	}
	posts := prov.posts.Load()
	fmt.Printf("replica killed: %d writes in flight on replica A, %d killed with it (SIGKILL); %d surfaced unknown after their leases (%d by repeats meeting the expired lease, %d by the background sweep alone); %d settled by verify (found), %d still unknown (the provider never made them); provider: %d refund requests, %d refunds, %d duplicates downstream\n",
		inFlight, killed, surfacedR+len(group("S")), surfacedR+len(group("S"))-toSweep, toSweep, found, unknown, posts, len(perOrder), duplicates)

	if killed != len(cases) {
		t.Errorf("%d calls died with replica A, want %d", killed, len(cases))
	}
	if toSweep == 0 {
		t.Errorf("no operation was left for the background sweep: group S's leases ended before group R's repeats were done")
	}
	if found != 10 || unknown != 10 || completedOps != 10 || unknownOps != 10 {
		t.Errorf("settled: %d found, %d unknown; ledger: %d completed, %d unknown; want 10 of each", found, unknown, completedOps, unknownOps)
	}
	if duplicates != 0 || posts != int64(len(cases)) || len(perOrder) != 10 {
		t.Errorf("downstream: %d refund requests, refunds per order %v: want %d requests, one refund for each of the 10 made", posts, perOrder, len(cases))
	}
	var doc struct {
		State map[string]any `json:"state"`
	}
	b.get("/v1/runs/"+run, supportKey).decode(t, &doc)
	if doc.State["refunded_paise"] != json.Number(fmt.Sprint(paid)) {
		t.Errorf("state %v, want refunded_paise %d (the refunds made, each once)", doc.State, paid)
	}
	client.CloseIdleConnections()
}
