package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// holdLivenessLock takes owner's liveness lock on a session of the test's
// own, waiting until the owner's session has ended, and keeps it until the
// test ends. To the replicas the owner then looks alive: the server still
// holds its session, as it would behind a network partition until its TCP
// keepalive gives up.
func holdLivenessLock(t *testing.T, schema, owner string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), postgrestest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", postgres.LivenessLockKey(schema, owner)); err != nil {
		t.Fatalf("take the liveness lock of %s: %v", owner, err)
	}
}

// Three replicas on PostgreSQL; replica A is SIGKILLed with 10 writes in
// flight (5 made by the provider, 5 never). At once, each call is repeated
// on replica B or C: A's session died with it, so they find its liveness
// lock free, wait out the fencing delay and surface its operations as
// unknown; each repeat answers within 5 s of the kill, verified (made) or
// unknown_outcome (never made), never duplicate_in_flight, although the
// leases (call deadline 30 s plus the default 30 s margin) run a minute.
// Nothing is sent again: no duplicate at the provider.
func TestReplicaFailoverInSeconds(t *testing.T) {
	const (
		run    = "failover"
		n      = 10
		total  = 30 * time.Second
		within = 5 * time.Second
	)
	st, storeURL := replicaStore(t)
	var orders []sim.Order
	var made []string
	for i := range n {
		o := fmt.Sprintf("ORD-%d", 3001+i)
		orders = append(orders, sim.Order{OrderID: o, CustomerID: "cust_42", AmountPaise: 100000})
		if i < n/2 {
			made = append(made, o)
		}
	}
	isMade := func(order string) bool { return order <= made[len(made)-1] }
	body := func(i int) string {
		return fmt.Sprintf(`{"tool":"issue_refund","args":{"order_id":%q,"amount_paise":%d}}`, orders[i].OrderID, 2001+i)
	}
	prov := startKillProvider(t, orders, made)
	cfg := replicaConfig(storeURL, prov.srv.URL, total)
	a, b, c := startServe(t, cfg), startServe(t, cfg), startServe(t, cfg)
	if r := b.post("/v1/runs", supportKey, `{"run_id":"`+run+`","principal":`+principal+`,"state":{"refunded_paise":0}}`); r.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", r.status, r.body)
	}

	outcomesA := make(chan callOutcome, n)
	for i := range n {
		go sendCall(a.base, run, body(i), outcomesA)
	}
	prov.waitArrived(t, n)
	for _, o := range made {
		prov.release[o]()
	}
	replicaPoll(t, time.Minute, "the provider makes 5 refunds", func() bool { return prov.Counts().Refunds == n/2 })
	ownerA := ""
	for i := range n {
		op, err := st.GetOperation(t.Context(), replicaRefundKey(orders[i].OrderID, int64(2001+i), run))
		if err != nil || op.Status != types.OpStarted || (ownerA != "" && op.Owner != ownerA) {
			t.Fatalf("before the kill: %+v %v; want started by replica A", op, err)
		}
		ownerA = op.Owner
	}

	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case <-a.done:
	case <-time.After(time.Minute):
		t.Fatal("replica A did not die")
	}

	type repeat struct {
		i     int
		took  time.Duration
		reply callOutcome
	}
	repeats := make(chan repeat, n)
	for i := range n {
		go func() {
			out := make(chan callOutcome, 1)
			sendCall([]*proc{b, c}[i%2].base, run, body(i), out)
			repeats <- repeat{i, time.Since(killed), <-out}
		}()
	}
	var slowest time.Duration
	codes := map[types.Code]int{}
	for range n {
		r := <-repeats
		slowest = max(slowest, r.took)
		order := orders[r.i].OrderID
		if r.reply.err != nil || r.reply.status != http.StatusOK {
			t.Errorf("%s: HTTP %d %v", order, r.reply.status, r.reply.err)
			continue
		}
		res := r.reply.res
		codes[res.Code()]++
		switch {
		case res.Code() == types.CodeDuplicateInFlight:
			t.Errorf("%s: duplicate_in_flight %s after the kill: the dead owner was not detected", order, r.took)
		case r.took > within:
			t.Errorf("%s: answered %s after the kill, want within %s", order, r.took, within)
		}
		ok := res.OK && (res.Meta.Verified || res.Meta.Replayed)
		if isMade(order) != ok || (!ok && res.Code() != types.CodeUnknownOutcome) {
			t.Errorf("%s (made: %v): %s verified=%v replayed=%v, want verified when made, unknown_outcome otherwise\n%s",
				order, isMade(order), res.Code(), res.Meta.Verified, res.Meta.Replayed, res.Observation)
		}
	}
	for range n {
		if o := <-outcomesA; o.err == nil {
			t.Errorf("a call on the killed replica was answered: HTTP %d", o.status)
		}
	}
	perOrder := map[string]int{}
	for _, r := range prov.Refunds() {
		perOrder[r.OrderID]++
	}
	duplicates := 0
	for _, k := range perOrder {
		duplicates += k - 1
	}
	posts := prov.posts.Load()
	fmt.Printf("failover: replica A (%s) SIGKILLed with %d writes in flight; repeats on B and C answered within %s of the kill (slowest), codes %v; provider: %d refund requests, %d refunds, %d duplicates\n",
		ownerA, n, slowest.Round(time.Millisecond), codes, posts, len(perOrder), duplicates)
	if posts != n || duplicates != 0 || len(perOrder) != n/2 {
		t.Errorf("provider: %d requests, refunds per order %v; want %d requests and one refund for each of the %d made", posts, perOrder, n, n/2)
	}
	// The state took each verified refund once.
	var paid int64
	for _, r := range prov.Refunds() {
		paid += r.AmountPaise
	}
	var doc struct {
		State map[string]any `json:"state"`
	}
	c.get("/v1/runs/"+run, supportKey).decode(t, &doc)
	if doc.State["refunded_paise"] != json.Number(fmt.Sprint(paid)) || paid != 2001+2002+2003+2004+2005 {
		t.Errorf("state %v, want refunded_paise %d (the 5 refunds made, each once)", doc.State, paid)
	}
	client.CloseIdleConnections()
}
