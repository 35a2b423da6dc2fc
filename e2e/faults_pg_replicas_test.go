package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/types"
)

// Three replicas on one PostgreSQL; replica A reaches it through a fault
// proxy that is blackholed for 4 s (longer than the liveness bound,
// 1.5 s), a partition: A's sessions stay open on the server. Ten writes
// retry on A against a provider that never answers in time (it honours
// keys, so every attempt is a request); at the partition the same ten are
// repeated on B and C, which carry on. Fencing: A sends no write once its
// liveness bound has passed since the partition, so none after B or C
// could take its operations over; B and C send them only after that
// (after the partition ends, A takes its lock again under a new owner id
// and ends its old session, which frees the old one's operations), never
// twice at once. A new write on A is sent within 5 s of the partition's
// end.
func TestPostgresPartitionedReplica(t *testing.T) {
	const (
		n         = 10
		partition = 4 * time.Second
		slack     = 300 * time.Millisecond // a request's way from A to the provider
	)
	st, storeURL := replicaStore(t)
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	u.Host = proxy.Addr()

	prov := &cutProvider{hold: 10 * time.Second}
	cfg := func(store, tag string) string {
		return strings.NewReplacer("{{STORE}}", store, "{{PROVIDER}}", prov.listen(t, tag)).Replace(cutYAML)
	}
	a := startServe(t, cfg(u.String(), "A"))
	b, c := startServe(t, cfg(storeURL, "B")), startServe(t, cfg(storeURL, "C"))
	if r := b.post("/v1/runs", supportKey, `{"run_id":"part","principal":`+principal+`,"state":{}}`); r.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", r.status, r.body)
	}
	body := func(i int) string {
		return fmt.Sprintf(`{"tool":"issue_refund","args":{"order_id":"ORD-%d","amount_paise":100}}`, 6001+i)
	}
	outA, outBC := make(chan callOutcome, n), make(chan callOutcome, n)
	for i := range n {
		go sendCall(a.base, "part", body(i), outA)
	}
	replicaPoll(t, time.Minute, "30 refund requests from A", func() bool { return len(prov.arrivals("A")) >= 3*n })
	op, err := st.GetOperation(t.Context(), "support-bot/refund:ORD-6001:100:part")
	if err != nil || op.Status != types.OpStarted {
		t.Fatalf("ledger before the partition: %+v %v", op, err)
	}

	partitionAt := time.Now()
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		go sendCall([]*proc{b, c}[i%2].base, "part", body(i), outBC)
	}
	time.Sleep(partition) // the fault's length is the point, not a synchronisation
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	healedAt := time.Now()

	// A is live again, under a new owner id, within 5 s of the end: a new
	// write reaches the provider.
	// (Repeated while A answers store_unavailable, as a client would.)
	answered := make(chan callOutcome, 1)
	answered <- callOutcome{}
	for len(prov.keyArrivals("A", "ORD-7000")) == 0 {
		if time.Since(healedAt) > 30*time.Second {
			t.Fatalf("a new write on A was not sent within 30s of the partition's end; A's log:\n%s", a.out)
		}
		select {
		case <-answered:
			go sendCall(a.base, "part", `{"tool":"issue_refund","args":{"order_id":"ORD-7000","amount_paise":100}}`, answered)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if took := prov.keyArrivals("A", "ORD-7000")[0].Sub(healedAt); took > 5*time.Second {
		t.Errorf("the new write on A was sent %s after the partition ended, want within 5s", took)
	}

	codesA := map[types.Code]int{}
	for range n {
		o := <-outA
		if o.err != nil || o.res == nil {
			t.Fatalf("a call on A was not answered: %v", o.err)
		}
		codesA[o.res.Code()]++
		if o.res.Meta.Attempts >= 12 {
			t.Errorf("a call on A made all %d attempts: it was never fenced", o.res.Meta.Attempts)
		}
	}
	codesBC := map[types.Code]int{}
	for range n {
		o := <-outBC
		if o.err != nil || o.res == nil {
			t.Fatalf("a repeat on B or C was not answered: %v", o.err)
		}
		codesBC[o.res.Code()]++
	}
	lastA, firstBC := time.Time{}, time.Time{}
	for _, at := range prov.keyArrivals("A", "ORD-60") {
		if at.After(lastA) {
			lastA = at
		}
	}
	var fromBC []time.Time
	for _, tag := range []string{"B", "C"} {
		fromBC = append(fromBC, prov.arrivals(tag)...)
	}
	for _, at := range fromBC {
		if firstBC.IsZero() || at.Before(firstBC) {
			firstBC = at
		}
	}
	fmt.Printf("partition: replica A cut from PostgreSQL for %s with %d writes retrying; A's last refund request %s after the partition began (bound %s); B and C: %d requests, the first %s after the partition ended; answers on A %v, on B and C %v\n",
		partition, n, lastA.Sub(partitionAt).Round(time.Millisecond), postgres.DefaultLivenessBound,
		len(fromBC), firstBC.Sub(healedAt).Round(time.Millisecond), codesA, codesBC)
	if lastA.After(partitionAt.Add(postgres.DefaultLivenessBound + slack)) {
		t.Errorf("replica A sent a refund %s after the partition began, past its liveness bound %s", lastA.Sub(partitionAt), postgres.DefaultLivenessBound)
	}
	if len(fromBC) == 0 {
		t.Error("B and C never took A's operations over")
	} else if !firstBC.After(lastA) {
		t.Errorf("B or C sent a refund (%s) before A's last (%s): two replicas sent one operation at once", firstBC.Format(time.StampMilli), lastA.Format(time.StampMilli))
	}

	newOp, err := st.GetOperation(t.Context(), "support-bot/refund:ORD-7000:100:part")
	if err != nil || newOp.Owner == op.Owner {
		t.Errorf("the write after the partition: %+v, %v; want it begun under a new owner id, not %s", newOp, err, op.Owner)
	}
	client.CloseIdleConnections()
}
