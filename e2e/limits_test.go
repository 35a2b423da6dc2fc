package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
)

// limitsYAML is the refund under a cumulative state rule, and a
// refund under a quota per customer, with a twin the provider refuses and
// a twin whose answer is lost, both sharing the quota. {{STORE}} and
// {{PROVIDER}} are filled in. opsKey (monitoring_test.go) is the
// operator's key: it may list quotas.
var limitsYAML = refunds.Config("{{PROVIDER}}",
	server(`"{{STORE}}"`, "{name: support-bot, key: "+supportKey+"}", "{name: ops, key: "+opsKey+", approver: true}"),
	refunds.Set("dependencies.payments.breaker", "{threshold: 1000}"),
	refunds.Delete("tools.get_order", "tools.list_refunds"),
	refunds.Delete("tools.issue_refund.permission", "tools.issue_refund.idempotency", "tools.issue_refund.owner", "tools.issue_refund.verify"),
	refunds.Add("tools.issue_refund", `description: Refund an order, at most 500000 paise per run in all.
input_schema: `+plainRefundArgs+`
timeout: {connect: 1s, read: 5s}
retry: {max_attempts: 1}
rules:
  - deny: "(has(state.refunded_paise) ? state.refunded_paise : 0) + args.amount_paise > 500000"
    code: over_limit
    message: "This run may refund at most 500000 paise in all; escalate for more."
state:
  refunded_paise: "(has(state.refunded_paise) ? state.refunded_paise : 0) + args.amount_paise"
`),
	refunds.Add("tools", `quota_refund:
  description: Refund an order, at most 500000 paise per customer an hour.
  dependency: payments
  request: {method: POST, path: /refunds}
  effect: write
  input_schema: &refund_args `+plainRefundArgs+`
  timeout: {connect: 1s, read: 5s}
  retry: {max_attempts: 1}
  quotas: &refund_quota
    - name: refunds_per_customer
      key: "{principal.id}"
      amount: "args.amount_paise"
      limit: 500000
      window: 1h
      message: "Customer {principal.id} may be refunded at most 500000 paise an hour."
quota_refund_refused:
  description: A refund the provider refuses (nothing done).
  dependency: payments
  request: {method: POST, path: /status/422}
  effect: write
  input_schema: *refund_args
  retry: {max_attempts: 1}
  quotas: *refund_quota
quota_refund_lost:
  description: A refund whose answer never comes (outcome unknown).
  dependency: payments
  request: {method: POST, path: /lost}
  effect: write
  input_schema: *refund_args
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 1}
  quotas: *refund_quota
`))

// limitsConfig fills in limitsYAML.
func limitsConfig(storeURL, provider string) string {
	return strings.NewReplacer("{{STORE}}", storeURL, "{{PROVIDER}}", provider).Replace(limitsYAML)
}

// startSlowProvider is the suite's provider whose refunds take delay.
func startSlowProvider(t *testing.T, delay time.Duration) *provider {
	t.Helper()
	pay := sim.NewPayments()
	pay.Delays = []time.Duration{delay}
	p := &provider{Payments: pay}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

// refundedSum is what the provider refunded, and how many refunds.
func refundedSum(p *provider, order func(string) bool) (sum int64, n int) {
	for _, r := range p.Refunds() {
		if order(r.OrderID) {
			sum += r.AmountPaise
			n++
		}
	}
	return sum, n
}

// parallelRefunds sends n refunds of amount for distinct orders on run,
// spread over procs, all at once, and returns their answers.
func parallelRefunds(t *testing.T, procs []*proc, run, tool, prefix string, n int, amount int64) []callOutcome {
	t.Helper()
	out := make(chan callOutcome, n)
	for i := range n {
		body := fmt.Sprintf(`{"tool":%q,"args":{"order_id":"%s-%d","amount_paise":%d}}`, tool, prefix, i, amount)
		go sendCall(procs[i%len(procs)].base, run, body, out)
	}
	answers := make([]callOutcome, 0, n)
	timeout := time.After(2 * time.Minute)
	for range n {
		select {
		case o := <-out:
			answers = append(answers, o)
		case <-timeout:
			t.Fatalf("only %d of %d answers within 2 minutes", len(answers), n)
		}
	}
	return answers
}

// checkStateRule runs n parallel refunds of 200000 under the 500000
// state rule on a fresh run, spread over procs, and checks the rule held:
// at most two made, the others over_limit or run_busy (nothing done), the
// run's state equal to what the provider refunded, and replay matching.
func checkStateRule(t *testing.T, procs []*proc, prov *provider, run string, n int) {
	t.Helper()
	if a := procs[0].post("/v1/runs", supportKey, `{"run_id":"`+run+`","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	start := time.Now()
	answers := parallelRefunds(t, procs, run, "issue_refund", run, n, 200000)
	took := time.Since(start)
	codes := map[types.Code]int{}
	for _, o := range answers {
		if o.err != nil || o.status != http.StatusOK {
			t.Fatalf("call: HTTP %d %v", o.status, o.err)
		}
		codes[o.res.Code()]++
		if !o.res.OK && o.res.Meta.SideEffect != types.SideEffectNone {
			t.Errorf("%s answered with side effect %s: %s", o.res.Code(), o.res.Meta.SideEffect, o.res.Observation)
		}
		if c := o.res.Code(); c == types.CodeRunBusy && (o.res.Meta.Next != types.NextWait || o.res.Meta.RetryAfterMS <= 0) {
			t.Errorf("run_busy without wait advice: %+v", o.res.Meta)
		}
	}
	sum, made := refundedSum(prov, func(order string) bool { return strings.HasPrefix(order, run+"-") })
	var doc struct {
		State struct {
			Refunded int64 `json:"refunded_paise"`
		} `json:"state"`
	}
	procs[len(procs)-1].get("/v1/runs/"+run, supportKey).decode(t, &doc)
	var rep struct {
		Matches bool `json:"matches"`
	}
	procs[0].get("/v1/runs/"+run+"/replay", supportKey).decode(t, &rep)
	fmt.Printf("limits: %d parallel refunds of 200000 under a 500000 state rule on %d replica(s): provider made %d (%d paise), answers %v, run state %d, replay matches %v, %s\n",
		n, len(procs), made, sum, codes, doc.State.Refunded, rep.Matches, took.Round(time.Millisecond))
	if made > 2 || sum > 500000 {
		t.Errorf("the provider made %d refunds (%d paise) under a 500000 limit", made, sum)
	}
	if codes[types.CodeOK] != made || codes[types.CodeOK]+codes["over_limit"]+codes[types.CodeRunBusy] != n {
		t.Errorf("answers %v: want %d ok, the rest over_limit or run_busy", codes, made)
	}
	if doc.State.Refunded != sum {
		t.Errorf("run state says %d refunded, the provider %d", doc.State.Refunded, sum)
	}
	if !rep.Matches {
		t.Error("replay does not match the run's state")
	}
}

// The case on the real binary and SQLite: five parallel refunds
// of 200000 under the 500000 state rule, the provider taking 800 ms each;
// then fifty.
func TestParallelRefundsHoldTheStateRule(t *testing.T) {
	prov := startSlowProvider(t, 800*time.Millisecond)
	srv := startServe(t, limitsConfig("sqlite:toolgate.db", prov.URL()))
	checkStateRule(t, []*proc{srv}, prov, "five", 5)
	checkStateRule(t, []*proc{srv}, prov, "fifty", 50)
	client.CloseIdleConnections()
}

// The same on three replicas sharing one PostgreSQL schema, the calls
// spread over them: the database is the arbiter.
func TestReplicasHoldTheStateRule(t *testing.T) {
	_, storeURL := replicaStore(t)
	prov := startSlowProvider(t, 800*time.Millisecond)
	cfg := limitsConfig(storeURL, prov.URL())
	procs := []*proc{startServe(t, cfg), startServe(t, cfg), startServe(t, cfg)}
	checkStateRule(t, procs, prov, "five", 5)
	checkStateRule(t, procs, prov, "fifty", 50)
	client.CloseIdleConnections()
}

// checkQuota runs 9 parallel refunds of 200000 spread over 3 runs of one
// customer (and over procs) under a quota of 500000 an hour, then checks
// another customer, a refusal downstream and an unknown outcome.
func checkQuota(t *testing.T, procs []*proc, prov *provider) {
	t.Helper()
	runs := []string{"q-a", "q-b", "q-c", "q-other", "q-refused", "q-lost"}
	customers := []string{"cust_42", "cust_42", "cust_42", "cust_7", "cust_9", "cust_8"}
	for i, run := range runs {
		if a := procs[i%len(procs)].post("/v1/runs", supportKey, fmt.Sprintf(`{"run_id":%q,"principal":{"id":%q}}`, run, customers[i])); a.status != http.StatusCreated {
			t.Fatalf("create run %s: %d %s", run, a.status, a.body)
		}
	}
	out := make(chan callOutcome, 9)
	for i := range 9 {
		body := fmt.Sprintf(`{"tool":"quota_refund","args":{"order_id":"QA-%d","amount_paise":200000}}`, i)
		go sendCall(procs[i%len(procs)].base, runs[i%3], body, out)
	}
	codes := map[types.Code]int{}
	for range 9 {
		o := <-out
		if o.err != nil || o.status != http.StatusOK {
			t.Fatalf("call: HTTP %d %v", o.status, o.err)
		}
		codes[o.res.Code()]++
		if o.res.Code() == types.CodeQuotaExceeded {
			if o.res.Meta.Next != types.NextWait || o.res.Meta.RetryAfterMS <= 0 || o.res.Error.Retryable ||
				!strings.Contains(o.res.Observation, "of 500000 used") {
				t.Errorf("quota_exceeded: next %s after %d ms: %s", o.res.Meta.Next, o.res.Meta.RetryAfterMS, o.res.Observation)
			}
		}
	}
	sum, made := refundedSum(prov, func(order string) bool { return strings.HasPrefix(order, "QA-") })
	fmt.Printf("limits: 9 parallel refunds of 200000 over 3 runs of one customer, quota 500000/1h, %d replica(s): provider made %d (%d paise), answers %v\n",
		len(procs), made, sum, codes)
	if made != 2 || codes[types.CodeOK] != 2 || codes[types.CodeQuotaExceeded] != 7 {
		t.Errorf("made %d, answers %v; want 2 ok and 7 quota_exceeded", made, codes)
	}
	call := func(p *proc, run, tool, order string, amount int) *types.Result {
		return p.call(run, supportKey, tool, fmt.Sprintf(`{"order_id":%q,"amount_paise":%d}`, order, amount))
	}
	last := procs[len(procs)-1]
	if res := call(last, "q-other", "quota_refund", "QO-1", 500000); !res.OK {
		t.Errorf("another customer: %s", res.Observation)
	}
	if res := call(procs[0], "q-refused", "quota_refund_refused", "QR-1", 400000); res.Code() != types.CodeRejected {
		t.Fatalf("refused downstream: %s", res.Observation)
	}
	if res := call(last, "q-refused", "quota_refund", "QR-2", 400000); !res.OK {
		t.Errorf("after a downstream refusal (released): %s", res.Observation)
	}
	if res := call(procs[0], "q-lost", "quota_refund_lost", "QL-1", 400000); res.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("lost answer: %s %s", res.Code(), res.Meta.SideEffect)
	}
	if res := call(last, "q-lost", "quota_refund", "QL-2", 400000); res.Code() != types.CodeQuotaExceeded {
		t.Errorf("after an unknown outcome (kept): %s, want quota_exceeded", res.Code())
	}
	// GET /v1/quotas: operators only.
	if a := last.get("/v1/quotas", supportKey); a.status != http.StatusForbidden {
		t.Errorf("GET /v1/quotas with an agent key: %d, want 403", a.status)
	}
	var doc struct {
		Quotas []struct {
			Quota string `json:"quota"`
			Key   string `json:"key"`
			Used  int64  `json:"used"`
			Left  int64  `json:"left"`
		} `json:"quotas"`
	}
	last.get("/v1/quotas", opsKey).decode(t, &doc)
	used := map[string]int64{}
	for _, q := range doc.Quotas {
		used[q.Key] = q.Used
	}
	want := map[string]int64{"cust_42": 400000, "cust_7": 500000, "cust_9": 400000, "cust_8": 400000}
	raw, _ := json.Marshal(doc)
	for k, v := range want {
		if used[k] != v {
			t.Errorf("GET /v1/quotas: %s used %d, want %d (%s)", k, used[k], v, raw)
		}
	}
}

// Quotas on the real binary and SQLite.
func TestQuotaAcrossRuns(t *testing.T) {
	prov := startSlowProvider(t, 0)
	srv := startServe(t, limitsConfig("sqlite:toolgate.db", prov.URL()))
	checkQuota(t, []*proc{srv}, prov)
	client.CloseIdleConnections()
}

// Quotas on three PostgreSQL replicas, the calls spread over them.
func TestReplicasHoldQuotas(t *testing.T) {
	_, storeURL := replicaStore(t)
	prov := startSlowProvider(t, 0)
	cfg := limitsConfig(storeURL, prov.URL())
	checkQuota(t, []*proc{startServe(t, cfg), startServe(t, cfg), startServe(t, cfg)}, prov)
	client.CloseIdleConnections()
}
