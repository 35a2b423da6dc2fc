package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// cutProvider holds every refund until the client gives up (or, after
// hold, answers 503), and notes when each arrived and on which of its listeners (one per replica,
// so that each replica's requests can be told apart).
type cutProvider struct {
	hold time.Duration
	mu   sync.Mutex
	arr  []arrival
}

// arrival is one refund request: when, through which listener, and
// under which Idempotency-Key.
type arrival struct {
	at  time.Time
	tag string
	key string
}

// listen starts a listener of the provider whose requests are tagged tag.
func (p *cutProvider) listen(t *testing.T, tag string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/refunds" {
			http.NotFound(w, r)
			return
		}
		p.mu.Lock()
		p.arr = append(p.arr, arrival{time.Now(), tag, r.Header.Get("Idempotency-Key")})
		p.mu.Unlock()
		select {
		case <-time.After(p.hold):
		case <-r.Context().Done():
		}
		http.Error(w, `{"error":"try later"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// keyArrivals returns the refund requests so far that came through tag
// under an Idempotency-Key holding part.
func (p *cutProvider) keyArrivals(tag, part string) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Time
	for _, a := range p.arr {
		if a.tag == tag && strings.Contains(a.key, part) {
			out = append(out, a.at)
		}
	}
	return out
}

// arrivals returns the refund requests so far that came through tag.
func (p *cutProvider) arrivals(tag string) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Time
	for _, a := range p.arr {
		if a.tag == tag {
			out = append(out, a.at)
		}
	}
	return out
}

// cutYAML is a write whose provider honours keys, so toolgate retries it
// after a read timeout (its outcome unknown), every attempt a request: 12
// attempts of 300 ms, 100-200 ms apart.
var cutYAML = refunds.Config("{{PROVIDER}}",
	server(`"{{STORE}}"`, "{name: support-bot, key: "+supportKey+"}"),
	refunds.Add("dependencies.payments", "{breaker: {threshold: 1000}, retry_budget: {ratio: 1, min_retries: 1000}}"),
	refunds.Delete("tools.get_order", "tools.list_refunds"),
	refunds.Delete("tools.issue_refund.input_schema.properties.reason", "tools.issue_refund.input_schema.properties.order_id.pattern",
		"tools.issue_refund.rules", "tools.issue_refund.owner", "tools.issue_refund.verify", "tools.issue_refund.state"),
	refunds.Add("tools.issue_refund", `timeout: {connect: 1s, read: 300ms, total: 60s}
retry: {max_attempts: 12, base: 100ms, cap: 200ms}
`))

// A replica cut from the database (pg_terminate_backend of every session
// it has) while 10 writes keep retrying against a provider that never
// answers in time (it honours keys, so toolgate retries each write after
// its unknown outcome, each attempt a request):
// replica A loses its liveness and sends no write after other replicas
// could take its operations over (the fencing delay after the cut); the
// calls answer without their remaining attempts. Replica B, to which the
// same calls are repeated at the cut, takes them over and sends them again
// under the same keys, never before that moment: at the provider the two
// replicas' requests never overlap. A then takes its lock again under a
// new owner id and serves new writes.
func TestReplicaCutFromDatabaseSendsNoWrite(t *testing.T) {
	const n = 10
	st, storeURL := replicaStore(t)
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", "toolgate-cut")
	u.RawQuery = q.Encode()

	prov := &cutProvider{hold: 10 * time.Second}
	a := startServe(t, strings.NewReplacer("{{STORE}}", u.String(), "{{PROVIDER}}", prov.listen(t, "A")).Replace(cutYAML))
	b := startServe(t, strings.NewReplacer("{{STORE}}", storeURL, "{{PROVIDER}}", prov.listen(t, "B")).Replace(cutYAML))
	if r := a.post("/v1/runs", supportKey, `{"run_id":"cut","principal":`+principal+`,"state":{}}`); r.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", r.status, r.body)
	}
	body := func(i int) string {
		return fmt.Sprintf(`{"tool":"issue_refund","args":{"order_id":"ORD-%d","amount_paise":100}}`, 4001+i)
	}
	outcomesA, outcomesB := make(chan callOutcome, n), make(chan callOutcome, n)
	for i := range n {
		go sendCall(a.base, "cut", body(i), outcomesA)
	}
	// Every call is retrying: a few attempts each have arrived.
	replicaPoll(t, time.Minute, "30 refund requests", func() bool { return len(prov.arrivals("A")) >= 3*n })
	op, err := st.GetOperation(t.Context(), "support-bot/refund:ORD-4001:100:cut")
	if err != nil || op.Status != types.OpStarted {
		t.Fatalf("ledger before the cut: %+v %v", op, err)
	}
	oldOwner := op.Owner

	conn, err := pgx.Connect(t.Context(), postgrestest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var cut int
	cutFrom := time.Now() // no session of A has ended before this reading
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'toolgate-cut'`).Scan(&cut); err != nil || cut < 2 {
		t.Fatalf("terminated %d sessions of the replica (%v), want its lock session and pool", cut, err)
	}
	cutAt := time.Now()
	for i := range n {
		go sendCall(b.base, "cut", body(i), outcomesB)
	}

	answered := map[types.Code]int{}
	for range n {
		o := <-outcomesA
		if o.err != nil || o.res == nil {
			t.Fatalf("a call was not answered: %v", o.err)
		}
		answered[o.res.Code()]++
		if o.res.Meta.Attempts >= 12 {
			t.Errorf("a call made all %d attempts: it was never fenced", o.res.Meta.Attempts)
		}
	}
	answeredB := map[types.Code]int{}
	for range n {
		o := <-outcomesB
		if o.err != nil || o.res == nil {
			t.Fatalf("a repeat on B was not answered: %v", o.err)
		}
		answeredB[o.res.Code()]++
	}
	// A's sends end before the earliest takeover (cutAt is later than the
	// end of A's sessions); B's begin after it (cutFrom is earlier).
	lastA, firstB := time.Time{}, time.Time{}
	fromA := prov.arrivals("A")
	for _, at := range fromA {
		if at.After(lastA) {
			lastA = at
		}
	}
	fromB := prov.arrivals("B")
	for _, at := range fromB {
		if firstB.IsZero() || at.Before(firstB) {
			firstB = at
		}
	}
	fmt.Printf("cut from the database: %d sessions of replica A terminated with %d writes retrying; A: %d refund requests, the last %s after the cut; B (repeats at the cut): %d requests, the first %s after the cut (takeover allowed from %s); answers on A %v, on B %v\n",
		cut, n, len(fromA), lastA.Sub(cutAt).Round(time.Millisecond), len(fromB), firstB.Sub(cutFrom).Round(time.Millisecond),
		postgres.DefaultTakeoverDelay, answered, answeredB)
	if !lastA.Before(cutAt.Add(postgres.DefaultTakeoverDelay)) {
		t.Errorf("replica A sent a refund %s after the cut, when others may have taken its operations over (from %s)", lastA.Sub(cutAt), postgres.DefaultTakeoverDelay)
	}
	if len(fromB) == 0 {
		t.Error("replica B never took the operations over")
	} else if firstB.Before(cutFrom.Add(postgres.DefaultTakeoverDelay)) {
		t.Errorf("replica B sent a refund %s after the cut, before the fencing delay %s", firstB.Sub(cutFrom), postgres.DefaultTakeoverDelay)
	}

	// Live again, under a new owner id: a new write is sent and begun
	// under it.
	sentA := len(fromA)
	replicaPoll(t, 30*time.Second, "a new write admitted after the cut", func() bool {
		out := make(chan callOutcome, 1)
		sendCall(a.base, "cut", `{"tool":"issue_refund","args":{"order_id":"ORD-5000","amount_paise":100}}`, out)
		o := <-out
		return o.err == nil && o.res != nil && o.res.Meta.Attempts > 0
	})
	if len(prov.arrivals("A")) <= sentA {
		t.Error("the new write reached no provider")
	}
	newOp, err := st.GetOperation(t.Context(), "support-bot/refund:ORD-5000:100:cut")
	if err != nil || newOp.Owner == oldOwner {
		t.Errorf("the write after the cut: %+v, %v; want it begun under a new owner id, not %s", newOp, err, oldOwner)
	}
	client.CloseIdleConnections()
}
