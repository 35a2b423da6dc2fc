package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// replicaYAML is the toolgate.yaml every replica of a test runs: one
// PostgreSQL schema ({{STORE}}), a refund write whose provider does not
// honour keys (no idempotency.header: toolgate's ledger alone dedupes) and
// its verify read. The operation key is an explicit template, so the same
// call made on any replica is the same operation. {{READ}} and {{TOTAL}}
// are the write's read timeout and call deadline.
var replicaYAML = refunds.Config("{{PROVIDER}}",
	server(`"{{STORE}}"`, "{name: support-bot, key: "+supportKey+"}"),
	refunds.Set("dependencies.payments.breaker", "{threshold: 1000}"),
	refunds.Delete("tools.get_order"),
	refunds.Add("tools.list_refunds", `input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}, additionalProperties: false}
timeout: {connect: 1s, read: 2s}
retry: {max_attempts: 1}
`),
	refunds.Delete("tools.issue_refund.input_schema.properties.reason", "tools.issue_refund.rules", "tools.issue_refund.owner"),
	refunds.Add("tools.issue_refund", `timeout: {connect: 1s, read: "{{READ}}", total: "{{TOTAL}}"}
retry: {max_attempts: 1}
idempotency: {key: "refund:{order_id}:{amount_paise}:{run_id}"}
`))

// replicaConfig fills in replicaYAML; total is the write's call deadline
// (its read timeout is a second less).
func replicaConfig(storeURL, provider string, total time.Duration) string {
	return strings.NewReplacer("{{STORE}}", storeURL, "{{PROVIDER}}", provider,
		"{{READ}}", (total - time.Second).String(), "{{TOTAL}}", total.String()).Replace(replicaYAML)
}

// replicaStore opens the test's own schema of the PostgreSQL test server
// (migrated, dropped at the end) and returns it with the store URL the
// replicas use to share it. The test reads the ledger through it; it runs
// no lease expiry of its own. Without TOOLGATE_TEST_POSTGRES the test is
// skipped (failed under CI=true).
func replicaStore(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	st := postgrestest.Open(t, postgres.Options{Owner: "e2e-observer"})
	u, err := url.Parse(postgrestest.URL(t))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL for the replicas' config", postgrestest.EnvVar)
	}
	q := u.Query()
	q.Set("search_path", st.Schema())
	u.RawQuery = q.Encode()
	return st, u.String()
}

// replicaRefundKey is the operation key replicaYAML's template makes, as
// the ledger stores it: scoped to the key that owns the run (support-bot).
func replicaRefundKey(order string, amount int64, run string) string {
	// The ledger keeps it scoped to the run's key (types.Run.ScopeOperationKey).
	return fmt.Sprintf("support-bot/refund:%s:%d:%s", order, amount, run)
}

// replicaPoll polls cond until it holds, failing after timeout: the replicas
// are other processes, so their state changes are observed, not awaited.
func replicaPoll(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replicaRunStep reads the run's admitted-step counter over HTTP.
func replicaRunStep(p *proc, runID string) int64 {
	var doc struct {
		Step int64 `json:"step"`
	}
	p.get("/v1/runs/"+runID, supportKey).decode(p.t, &doc)
	return doc.Step
}

// replicaRefundOf decodes the refund in a result's data.
func replicaRefundOf(res *types.Result) sim.Refund {
	var r sim.Refund
	_ = json.Unmarshal(res.Data, &r)
	return r
}

// Three `toolgate serve` processes on one PostgreSQL schema; 60 concurrent
// identical refund calls spread across them, all held until every one is
// admitted: the provider makes exactly one refund and all 60 callers get
// its id (one executed it, 59 waited for its committed result and replayed
// it, whichever replica they called).
func TestReplicasExecuteOnce(t *testing.T) {
	const n, replicas = 60, 3
	const run, order, amount = "refund-60", "ORD-4471", int64(425000)
	st, storeURL := replicaStore(t)

	pay := sim.NewPayments(sim.Order{OrderID: order, CustomerID: "cust_42", AmountPaise: 500000})
	arrived := make(chan int, n)
	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	pay.Hold = func(i int) <-chan struct{} {
		arrived <- i
		return gate
	}
	prov := httptest.NewServer(pay)
	t.Cleanup(func() {
		release()
		prov.CloseClientConnections()
		prov.Close()
	})

	// Generous deadlines: a caller waiting for the winner must not reach
	// its deadline (duplicate_in_flight) while the provider holds it.
	cfg := replicaConfig(storeURL, prov.URL, 30*time.Second)
	procs := make([]*proc, replicas)
	for i := range procs {
		procs[i] = startServe(t, cfg)
	}
	if a := procs[0].post("/v1/runs", supportKey, `{"run_id":"`+run+`","principal":`+principal+`,"state":{"refunded_paise":0}}`); a.status != http.StatusCreated {
		t.Fatalf("create run on replica 1: %d %s", a.status, a.body)
	}

	body := fmt.Sprintf(`{"tool":"issue_refund","args":{"order_id":%q,"amount_paise":%d}}`, order, amount)
	type answer struct {
		replica int
		callOutcome
	}
	outcomes := make(chan answer, n)
	for i := range n {
		go func() {
			out := make(chan callOutcome, 1)
			sendCall(procs[i%replicas].base, run, body, out)
			outcomes <- answer{i % replicas, <-out}
		}()
	}
	// Every call is admitted (its step taken in the shared run) and the
	// provider holds the one that won the ledger; only then let it go.
	replicaPoll(t, time.Minute, "60 calls admitted", func() bool { return replicaRunStep(procs[1], run) == n })
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("no refund reached the provider within a minute")
	}
	if op, err := st.GetOperation(t.Context(), replicaRefundKey(order, amount, run)); err != nil || op.Status != types.OpStarted {
		t.Fatalf("ledger before release: %+v %v, want started", op, err)
	}
	release()

	var ids = map[string]int{}
	executed, replayed := 0, 0
	answered := make([]int, replicas)
	timeout := time.After(2 * time.Minute)
	for range n {
		var o answer
		select {
		case o = <-outcomes:
		case <-timeout:
			t.Fatalf("answers missing after 2 minutes: %d ok so far", executed+replayed)
		}
		if o.err != nil || o.status != http.StatusOK || !o.res.OK {
			t.Errorf("call on replica %d: HTTP %d %v %+v", o.replica+1, o.status, o.err, o.res)
			continue
		}
		answered[o.replica]++
		ids[replicaRefundOf(o.res).RefundID]++
		if o.res.Meta.Replayed {
			replayed++
		} else {
			executed++
		}
	}
	c := pay.Counts()
	var id string
	for k := range ids {
		id = k
	}
	fmt.Printf("replicas: %d replicas, %d concurrent identical refunds (answered ok per replica %v): provider saw %d request(s), made %d refund(s); %d answers ok, %d distinct refund id(s) %v; %d executed, %d replayed\n",
		replicas, n, answered, c.Requests, c.Refunds, executed+replayed, len(ids), ids, executed, replayed)
	if c.Requests != 1 || c.Refunds != 1 {
		t.Fatalf("the provider saw %d requests and made %d refunds, want 1 and 1", c.Requests, c.Refunds)
	}
	if len(ids) != 1 || id == "" || ids[id] != n {
		t.Fatalf("refund ids %v, want one id in all %d answers", ids, n)
	}
	if executed != 1 || replayed != n-1 {
		t.Errorf("%d executed and %d replayed, want 1 and %d", executed, replayed, n-1)
	}

	op, err := st.GetOperation(t.Context(), replicaRefundKey(order, amount, run))
	if err != nil || op.Status != types.OpCompleted {
		t.Fatalf("ledger after: %+v %v, want completed", op, err)
	}
	// Every replica reads the same history and state from the shared store:
	// 60 rows, the refund applied to the state once.
	for i, p := range procs {
		var doc struct {
			Step    int64          `json:"step"`
			State   map[string]any `json:"state"`
			History []struct {
				Code types.Code `json:"code"`
			} `json:"history"`
		}
		p.get("/v1/runs/"+run, supportKey).decode(t, &doc)
		if doc.Step != n || len(doc.History) != n || doc.State["refunded_paise"] != json.Number(fmt.Sprint(amount)) || doc.State["refund_id"] != id {
			t.Errorf("replica %d: run step %d, %d rows, state %v", i+1, doc.Step, len(doc.History), doc.State)
		}
		var list struct {
			Executions []types.Execution `json:"executions"`
		}
		p.get("/v1/executions?run="+run+"&limit=100", supportKey).decode(t, &list)
		if len(list.Executions) != n {
			t.Errorf("replica %d lists %d executions of the run, want %d", i+1, len(list.Executions), n)
		}
	}
	client.CloseIdleConnections()
}
