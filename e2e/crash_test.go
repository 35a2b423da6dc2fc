package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

// crashYAML is the crash test's toolgate.yaml: DB is the one SQLite file of
// the whole test, PROVIDER the fake payment provider.
//
//   - issue_refund does not send its operation key (the provider could not
//     dedupe it): after an unknown outcome it is never sent again, only
//     settled by its verify read, list_refunds.
//   - refund_keyed sends its key in Idempotency-Key, which the provider
//     honours: after an unknown outcome a repeat re-sends under the same key.
//
// Both keep a sum in the run's state, so a double-applied update shows.
var crashYAML = refunds.Config("PROVIDER",
	refunds.Set("store", `"sqlite:DB"`),
	refunds.Set("dependencies.payments.breaker", "{threshold: 100000}"),
	refunds.Add("dependencies", `payments_keyed: {base_url: "PROVIDER", breaker: {threshold: 100000}}`),
	refunds.Delete("tools.get_order"),
	refunds.Add("tools.list_refunds", `{timeout: {connect: 1s, read: 2s}, retry: {max_attempts: 2, base: 10ms, cap: 50ms}}`),
	refunds.Delete("tools.issue_refund.permission", "tools.issue_refund.input_schema.properties.reason", "tools.issue_refund.idempotency",
		"tools.issue_refund.rules", "tools.issue_refund.owner", "tools.issue_refund.state.refund_id"),
	refunds.Add("tools.issue_refund", `{timeout: {connect: 1s, read: 300ms}, retry: {max_attempts: 2, base: 10ms, cap: 50ms}}`),
	refunds.Add("tools", `refund_keyed:
  description: Refund part of an order under an Idempotency-Key the provider honours.
  dependency: payments_keyed
  request: {method: POST, path: /refunds}
  effect: write
  input_schema: {type: object, required: [order_id, amount_paise], properties: {order_id: {type: string, pattern: "^ORD-[0-9]+$"}, amount_paise: {type: integer, minimum: 1}}, additionalProperties: false}
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 3, base: 10ms, cap: 50ms}
  idempotency: {key: "keyed:{order_id}:{amount_paise}:{run_id}", header: Idempotency-Key}
  state:
    keyed_paise: "state.keyed_paise + args.amount_paise"
`))

// The shape of the crash test.
const (
	crashRounds          = 50
	crashShortRounds     = 10
	crashNewOps          = 12                     // new operations per round
	crashRepeats         = 4                      // repeats of earlier operations per round
	crashWorkers         = 4                      // goroutines sending a round's calls
	crashMaxKill         = 500 * time.Millisecond // the kill lands in [0, this) after the calls start
	crashReconcile       = 5                      // of every 5 restarts, one runs `toolgate reconcile` first,
	crashReconcileBeside = 2                      // and one runs it beside the server, during the settling pass
	crashMaxOrders       = 4096
)

var crashRuns = []string{"crash-a", "crash-b", "crash-c"}

const (
	toolPlain = "issue_refund"
	toolKeyed = "refund_keyed"
)

// crashOp is one operation (one refund): its own order, so the provider's
// refunds of that order are its effects downstream.
type crashOp struct {
	tool   string
	run    string
	order  string
	amount int64
	// lost: confirmed by a settling pass on a quiet provider to be unknown
	// in the ledger with no effect downstream (the crash came after the
	// intent was durable, before the provider made the refund). toolgate
	// never sends it again; settling passes stop repeating it.
	lost bool
}

// crashCall is one call the test sent, and what came back.
type crashCall struct {
	id     string
	round  int
	op     *crashOp
	status int // 0: no HTTP answer
	res    types.Result
	// answered: HTTP 200 with an envelope of this call.
	answered bool
	err      error
}

// crashCounts are the figures printed at the end.
type crashCounts struct {
	rounds int
	// callsSent = callsAnswered + callsUnanswered, drive and settling.
	callsSent, callsAnswered, callsUnanswered int
	// rows: execution rows in the file (the test's calls and reconcile's);
	// operations: those the test made; ledgerOps: those in the ledger;
	// effects: the provider's refunds; duplicates: operations refunded
	// more than once (must be 0).
	rows, operations, ledgerOps, effects, duplicates int
	// Where the kills landed, per call or operation of a round:
	// notReached: unanswered, no row, no operation (before the ledger);
	// startedAtKill: operations started at the kill, split into
	// killedBeforeSend (never made downstream) and killedInFlight (made: the
	// provider had it, or had answered and toolgate had not committed);
	// committedUnanswered: unanswered calls whose row is in the file
	// (killed after the commit, before the answer arrived).
	notReached, startedAtKill, killedBeforeSend, killedInFlight, committedUnanswered int
	// startedAfterRestart: operations started right after a restart (must
	// be 0).
	startedAfterRestart int
	// unknownBeforeSettling: operations started or unknown at a kill (all
	// unknown after the restart), not counting those already lost; after
	// settling each is completed (settledByVerify for issue_refund,
	// settledByResend for refund_keyed) or still unknown
	// (unknownAfterSettling, never made downstream).
	unknownBeforeSettling, unknownAfterSettling, settledByVerify, settledByResend int
	// reconcileRuns of `toolgate reconcile`; reconcileSettled: the
	// operations they reported settled.
	reconcileRuns, reconcileSettled int
	// lostOps: operations unknown for good at the end (never made).
	lostOps int
	// twins: settling repeats sent twice in parallel.
	twins int
	// replayed, verifiedAnswer: answers with meta.replayed, meta.verified.
	replayed, verifiedAnswer int
	codes                    map[types.Code]int // of the answers
}

// crashTest is the state of one crash test.
type crashTest struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	prov    *crashProvider
	st      *sqlite.Store
	cfg     string
	cfgPath string
	client  *http.Client

	ops     []*crashOp
	byOrder map[string]*crashOp
	calls   []*crashCall
	nextID  int
	n       crashCounts
	rounds  int
	// roundStart is when the round's first call was sent.
	roundStart time.Time
}

// A crash test: the real binary on one SQLite file, writes driven at a fake
// provider over 127.0.0.1, SIGKILLed at a random moment in every round.
//
// A round: 16 calls (12 new operations, 4 repeats of earlier ones; each
// operation once) from 4 goroutines, the provider taking 0-400ms per refund
// (some beyond the tools' 300ms read timeout), and SIGKILL after a random
// 0-500ms. Then: wait until the provider has processed every request the
// dead process sent (a signal, not a sleep); on every 5th round run
// `toolgate reconcile` alone; restart `toolgate serve` on the same file;
// the settling pass: the model repeats every call it holds no settled
// answer for, a third of them twice in parallel (and once more those whose
// repeat said unknown_outcome), with `toolgate reconcile` running beside
// the server on another of every 5 rounds.
//
// Asserted after every restart (see checkRecovered, checkRows and
// checkSettled):
//
//  1. no operation was executed twice downstream (the provider's refunds
//     per operation are at most one);
//  2. every call that received an answer (HTTP 200 with an envelope of that
//     call) has its execution row in the file, with the answer's code,
//     replayed and verified; every answer ok is one refund downstream;
//  3. right after the restart no operation is started, and every one the
//     crash left started is unknown (crash recovery). After the settling
//     pass: none is started; every operation whose refund was made is
//     completed, and every completed one was made exactly once; a keyed
//     operation is always completed (claimed and re-sent under its key); an
//     unkeyed one is completed (settled by its verify read) or unknown with
//     no refund downstream: the crash came after its intent was durable and
//     before the provider made it, the verify read finds nothing, and
//     toolgate never re-sends it. Such an operation stays unknown and unmade
//     through every later repeat and reconcile (checked every round);
//  4. each run's state sums exactly the provider's refunds of the run's
//     operations (no update lost or applied twice), and GET
//     /v1/runs/{run}/replay says matches.
//
// The seed is logged; TOOLGATE_CRASH_SEED=N repeats a run's random choices
// (timing still varies). -short runs 10 rounds instead of 50. The counts
// are printed at the end (visible with -v: go test shows a passing
// package's output only then).
func TestCrashSIGKILL(t *testing.T) {
	began := time.Now()
	rounds := crashRounds
	if testing.Short() {
		rounds = crashShortRounds
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TOOLGATE_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TOOLGATE_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("crash test seed %d (TOOLGATE_CRASH_SEED=%d repeats its choices)", seed, seed)

	dir := t.TempDir()
	db := filepath.Join(dir, "toolgate.db")
	c := &crashTest{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		byOrder: map[string]*crashOp{},
		n:       crashCounts{codes: map[types.Code]int{}},
		client:  &http.Client{Timeout: time.Minute, Transport: &http.Transport{}},
	}
	defer c.client.CloseIdleConnections()
	c.prov = startCrashProvider(t, seed)
	c.cfg = strings.NewReplacer("PROVIDER", c.prov.URL(), "DB", db).Replace(crashYAML)
	c.cfgPath = filepath.Join(dir, "toolgate.yaml")
	if err := writeFile(c.cfgPath, c.cfg); err != nil {
		t.Fatal(err)
	}
	// The test's own handle on the file: it reads the ledger, the rows and
	// the runs between (and during) the server's lives.
	st, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c.st = st

	srv := startServe(t, c.cfg)
	for _, run := range crashRuns {
		body := `{"run_id":"` + run + `","principal":{"id":"cust_42"},"state":{"refunded_paise":0,"keyed_paise":0}}`
		if a := srv.post("/v1/runs", "", body); a.status != http.StatusCreated {
			t.Fatalf("create run %s: %d %s", run, a.status, a.body)
		}
	}
	c.rounds = rounds
	for round := range rounds {
		c.n.rounds++
		c.drive(srv, round)
		pending := c.afterKill(srv, round)
		if c.reconcileAlone(round) {
			c.reconcile(round)()
		}
		srv = startServe(t, c.cfg)
		c.checkRecovered(round, pending)
		calls := c.repeats(round) // reads the ledger before reconcile runs beside
		wait := func() {}
		if round%crashReconcile == crashReconcileBeside {
			wait = c.reconcile(round)
		}
		c.settle(srv, round, calls)
		wait()
		c.checkSettled(srv, round, pending)
	}
	// A clean stop to end with.
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := srv.exitCode(); code != 0 {
		t.Fatalf("seed %d: toolgate exited %d after SIGINT:\n%s", seed, code, srv.out)
	}
	c.checkNoRace(srv)
	c.summary(time.Since(began))
}

// drive sends a round's calls (new operations and repeats of earlier ones,
// each operation once) from several goroutines and SIGKILLs the server at
// a random moment meanwhile.
func (c *crashTest) drive(srv *proc, round int) {
	var batch []*crashOp
	for _, i := range c.rng.Perm(len(c.ops))[:min(crashRepeats, len(c.ops))] {
		batch = append(batch, c.ops[i])
	}
	for range crashNewOps {
		batch = append(batch, c.newOp())
	}
	c.rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	calls := make([]*crashCall, len(batch))
	for i, op := range batch {
		calls[i] = &crashCall{id: fmt.Sprintf("r%02d-drive-%02d", round, i), round: round, op: op}
	}
	kill := time.Duration(c.rng.Int64N(int64(crashMaxKill)))
	c.roundStart = time.Now()

	c.prov.fast.Store(false)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		c.sendAll(srv.base, calls)
	}()
	time.Sleep(kill) // the random moment is the point of the test
	if err := srv.cmd.Process.Kill(); err != nil {
		c.t.Fatalf("seed %d round %d: SIGKILL: %v", c.seed, round, err)
	}
	<-srv.done
	<-sent
	c.record(calls)
}

// newOp makes a new operation on its own order.
func (c *crashTest) newOp() *crashOp {
	c.nextID++
	if c.nextID > crashMaxOrders {
		c.t.Fatalf("more than %d operations", crashMaxOrders)
	}
	tool := toolPlain
	if c.rng.IntN(2) == 1 {
		tool = toolKeyed
	}
	op := &crashOp{tool: tool, run: crashRuns[c.rng.IntN(len(crashRuns))],
		order: fmt.Sprintf("ORD-%d", c.nextID), amount: int64(100 + c.nextID)}
	c.ops = append(c.ops, op)
	c.byOrder[op.order] = op
	c.n.operations++
	return op
}

// send posts one call and keeps what came back. Called from the drive's
// goroutines: it reports nothing to t.
func (c *crashTest) send(base string, cl *crashCall) {
	body := fmt.Sprintf(`{"tool":%q,"args":{"order_id":%q,"amount_paise":%d},"call_id":%q}`,
		cl.op.tool, cl.op.order, cl.op.amount, cl.id)
	req, err := http.NewRequest("POST", base+"/v1/runs/"+cl.op.run+"/calls", strings.NewReader(body))
	if err != nil {
		cl.err = err
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		cl.err = err
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		cl.err = err // cut off mid-answer: no answer
		return
	}
	cl.status = resp.StatusCode
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cl.res); err != nil {
		cl.err = fmt.Errorf("HTTP %d, not an envelope: %v: %s", resp.StatusCode, err, b)
		return
	}
	cl.answered = resp.StatusCode == http.StatusOK && cl.res.Meta.CallID == cl.id
	if !cl.answered {
		cl.err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
}

// record adds calls to the test's log; a complete answer other than a 200
// envelope of the call is a failure (the server has no reason to give one).
func (c *crashTest) record(calls []*crashCall) {
	for _, cl := range calls {
		c.calls = append(c.calls, cl)
		c.n.callsSent++
		switch {
		case cl.answered:
			c.n.callsAnswered++
			c.n.codes[cl.res.Code()]++
			if cl.res.Meta.Replayed {
				c.n.replayed++
			}
			if cl.res.Meta.Verified {
				c.n.verifiedAnswer++
			}
		case cl.status != 0:
			c.t.Fatalf("seed %d: call %s (%s %s): %v", c.seed, cl.id, cl.op.tool, cl.op.order, cl.err)
		default:
			c.n.callsUnanswered++
		}
	}
}

// afterKill waits for the provider to finish what the dead process left in
// it, checks the rows of the answered calls, and returns the operations the
// crash left started or unknown (by order).
func (c *crashTest) afterKill(srv *proc, round int) map[string]types.OpStatus {
	c.checkNoRace(srv)
	c.prov.waitIdle(c.t, c.seed)
	c.prov.fast.Store(true)
	rows := c.checkRows(round, "after the kill")
	ledger := c.ledger()
	pending := map[string]types.OpStatus{}
	for order, l := range ledger {
		if o := c.byOrder[order]; l.Status == types.OpCompleted || o == nil || o.lost {
			continue
		}
		pending[order] = l.Status
		if l.Status == types.OpStarted {
			c.n.startedAtKill++
		}
	}
	c.n.unknownBeforeSettling += len(pending)
	for _, cl := range c.calls {
		if cl.round != round || cl.answered {
			continue
		}
		if _, ok := rows[cl.id]; ok {
			c.n.committedUnanswered++
		} else if ledger[cl.op.order] == nil {
			c.n.notReached++
		}
	}
	return pending
}

// reconcileAlone says whether `toolgate reconcile` runs after this round's
// kill, before the restart.
func (c *crashTest) reconcileAlone(round int) bool {
	return round%crashReconcile == crashReconcile-1
}

// reconcile starts `toolgate reconcile` and returns a func that waits for
// it. Alone (no server), it takes the file's lock and turns the started
// operations unknown itself; beside a server, it leaves the lock to it.
// Either way it settles every unknown operation by its verify read (or,
// for the keyed tool, a re-send under its key), racing the server's calls
// when one runs.
func (c *crashTest) reconcile(round int) (wait func()) {
	c.n.reconcileRuns++
	cmd := exec.Command(binary, "reconcile", "--config", c.cfgPath, "--json")
	// A race-enabled binary sleeps a second at exit unless told not to.
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	var once sync.Once
	var err error
	end := func() { once.Do(func() { err = cmd.Wait() }) }
	c.t.Cleanup(func() { // a test that failed meanwhile leaves nothing behind
		_ = cmd.Process.Kill()
		end()
	})
	return func() {
		c.t.Helper()
		if end(); err != nil {
			c.t.Fatalf("seed %d round %d: toolgate reconcile: %v\n%s%s", c.seed, round, err, stdout.Bytes(), stderr.Bytes())
		}
		c.reconciled(round, stdout.Bytes())
	}
}

// reconciled reads the outcome `toolgate reconcile --json` printed.
func (c *crashTest) reconciled(round int, out []byte) {
	var got struct {
		Operations []struct {
			Key  string     `json:"key"`
			Code types.Code `json:"code"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		c.t.Fatalf("seed %d round %d: toolgate reconcile --json: %v\n%s", c.seed, round, err, out)
	}
	for _, s := range got.Operations {
		if s.Code == types.CodeOK {
			c.n.reconcileSettled++
		}
	}
}

// checkRecovered runs right after a restart, before any call: no
// operation is left started; without reconcile, every operation the crash
// left started is now unknown.
func (c *crashTest) checkRecovered(round int, pending map[string]types.OpStatus) {
	if started := c.listOps(types.OpStarted); len(started) > 0 {
		c.n.startedAfterRestart += len(started)
		c.t.Fatalf("seed %d round %d: %d operation(s) still started after the restart, e.g. %s", c.seed, round, len(started), started[0].Key)
	}
	reconciled := c.reconcileAlone(round)
	unknown := map[string]bool{}
	for _, op := range c.listOps(types.OpUnknown) {
		unknown[c.orderOf(op)] = true
	}
	for order, status := range pending {
		if status == types.OpStarted && !reconciled && !unknown[order] {
			c.t.Fatalf("seed %d round %d: the operation of %s was started at the kill and is not unknown after the restart", c.seed, round, order)
		}
	}
}

// repeats are the settling pass's calls: the model repeats every call it
// holds no settled answer for, i.e. every operation not completed in the
// ledger (unknown, or never recorded because the call never reached the
// ledger), except those already confirmed lost; a third of them twice.
func (c *crashTest) repeats(round int) []*crashCall {
	ledger := c.ledger()
	var calls []*crashCall
	for _, op := range c.ops {
		if l := ledger[op.order]; op.lost || (l != nil && l.Status == types.OpCompleted) {
			continue
		}
		calls = append(calls, &crashCall{id: fmt.Sprintf("r%02d-settle-%03d", round, len(calls)), round: round, op: op})
		if c.rng.IntN(3) == 0 {
			// The model emits the same repeat twice in parallel.
			calls = append(calls, &crashCall{id: fmt.Sprintf("r%02d-settle-%03d", round, len(calls)), round: round, op: op})
			c.n.twins++
		}
	}
	return calls
}

// settle sends the settling pass's calls, with the provider quiet; a
// running server answers every one. The model repeats once more, once, an
// operation whose repeat was not answered ok (unknown_outcome: verify
// again), as it would after a repeat that timed out on a loaded machine;
// an operation lost for good just answers unknown_outcome again.
func (c *crashTest) settle(srv *proc, round int, calls []*crashCall) {
	for pass := 0; pass < 2 && len(calls) > 0; pass++ {
		c.sendAll(srv.base, calls)
		for _, cl := range calls {
			if !cl.answered {
				c.t.Fatalf("seed %d round %d: repeat %s of %s got no answer from a running server: %v", c.seed, round, cl.id, cl.op.order, cl.err)
			}
		}
		c.record(calls)
		var again []*crashCall
		seen := map[*crashOp]bool{}
		for _, cl := range calls {
			if !cl.res.OK && !seen[cl.op] {
				seen[cl.op] = true
				again = append(again, &crashCall{id: fmt.Sprintf("r%02d-again-%03d", round, len(again)), round: round, op: cl.op})
			}
		}
		calls = again
	}
}

// sendAll sends calls from crashWorkers goroutines and returns when every
// one has its outcome.
func (c *crashTest) sendAll(base string, calls []*crashCall) {
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(calls); i += crashWorkers {
				c.send(base, calls[i])
			}
		}()
	}
	wg.Wait()
}

// countSettled counts how the operations the crash left started or unknown
// were settled.
func (c *crashTest) countSettled(pending map[string]types.OpStatus, ledger map[string]*types.Operation) {
	for order := range pending {
		l := ledger[order]
		if l == nil || l.Status != types.OpCompleted {
			c.n.unknownAfterSettling++
			continue
		}
		if l.Tool == toolKeyed {
			c.n.settledByResend++
		} else {
			c.n.settledByVerify++
		}
	}
}

// checkSettled checks the invariants once every call has ended (after the
// settling pass), and counts how the pending operations were settled.
func (c *crashTest) checkSettled(srv *proc, round int, pending map[string]types.OpStatus) {
	t, seed := c.t, c.seed
	const when = "after settling"
	c.checkRows(round, when)
	ledger := c.ledger()
	for _, l := range ledger {
		if l.Status == types.OpStarted {
			t.Fatalf("seed %d round %d %s: operation %s is started with no call in flight", seed, round, when, l.Key)
		}
	}
	c.countSettled(pending, ledger)
	for order, status := range pending {
		if status != types.OpStarted {
			continue
		}
		if c.prov.made(order) {
			c.n.killedInFlight++
		} else {
			c.n.killedBeforeSend++
		}
	}
	effects := map[string][]sim.Refund{}
	refunds := c.prov.Refunds()
	for _, r := range refunds {
		effects[r.OrderID] = append(effects[r.OrderID], r)
	}
	known := map[string]*crashOp{}
	want := map[string]map[string]int64{}
	unknown, dups := 0, 0
	for _, op := range c.ops {
		known[op.order] = op
		done := effects[op.order]
		l := ledger[op.order]
		status := types.OpStatus("(none)")
		if l != nil {
			status = l.Status
		}
		if len(done) > 1 {
			dups++
			t.Errorf("seed %d round %d %s: %s %s executed %d times downstream", seed, round, when, op.tool, op.order, len(done))
		}
		for _, r := range done {
			if r.AmountPaise != op.amount {
				t.Errorf("seed %d round %d: %s refunded %d paise, want %d", seed, round, op.order, r.AmountPaise, op.amount)
			}
		}
		switch {
		case len(done) > 0 && status != types.OpCompleted:
			t.Errorf("seed %d round %d %s: %s %s happened downstream but its operation is %s", seed, round, when, op.tool, op.order, status)
		case status == types.OpCompleted && len(done) == 0:
			t.Errorf("seed %d round %d %s: %s %s is completed but never happened downstream", seed, round, when, op.tool, op.order)
		case status == types.OpCompleted:
		case op.tool == toolKeyed:
			t.Errorf("seed %d round %d %s: keyed %s is %s after a repeat under its key", seed, round, when, op.order, status)
		case status == types.OpUnknown:
			// Begun, never made: verify cannot find it and toolgate never
			// re-sends it blindly. It stays unknown, and stays unmade.
			op.lost = true
			unknown++
		default:
			t.Errorf("seed %d round %d %s: %s %s is %s after its repeat", seed, round, when, op.tool, op.order, status)
		}
		if len(done) > 0 {
			if want[op.run] == nil {
				want[op.run] = map[string]int64{}
			}
			key := "refunded_paise"
			if op.tool == toolKeyed {
				key = "keyed_paise"
			}
			want[op.run][key] += op.amount
		}
	}
	for _, cl := range c.calls {
		if cl.answered && cl.res.OK && len(effects[cl.op.order]) != 1 {
			t.Errorf("seed %d round %d %s: call %s was answered ok (replayed %v, verified %v) but %s was made %d times downstream",
				seed, round, when, cl.id, cl.res.Meta.Replayed, cl.res.Meta.Verified, cl.op.order, len(effects[cl.op.order]))
		}
	}
	for order := range effects {
		if known[order] == nil {
			t.Errorf("seed %d round %d: a refund of %s, which no call asked for", seed, round, order)
		}
	}
	for order, l := range ledger {
		if known[order] == nil {
			t.Errorf("seed %d round %d: operation %s of %s, which no call asked for", seed, round, l.Key, order)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	for _, run := range crashRuns {
		r, err := c.st.GetRun(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(r.State))
		dec.UseNumber()
		var state map[string]json.Number
		if err := dec.Decode(&state); err != nil {
			t.Fatalf("run %s state %s: %v", run, r.State, err)
		}
		for _, key := range []string{"refunded_paise", "keyed_paise"} {
			if got := state[key].String(); got != strconv.FormatInt(want[run][key], 10) {
				t.Fatalf("seed %d round %d %s: run %s state %s = %s, but the provider refunded %d for its operations",
					seed, round, when, run, key, got, want[run][key])
			}
		}
		var rep struct {
			Matches bool `json:"matches"`
			Steps   int  `json:"steps"`
		}
		srv.get("/v1/runs/"+run+"/replay", "").decode(t, &rep)
		if !rep.Matches {
			t.Fatalf("seed %d round %d %s: replay of run %s does not match its state", seed, round, when, run)
		}
	}
	c.n.lostOps = unknown
	c.n.effects = len(refunds)
	c.n.duplicates = dups
	c.n.ledgerOps = len(ledger)
}

// checkRows checks that every call that received an answer has its
// execution row, with the answer's code. Every 10th round and the last one
// check the calls of every round; the others, to keep the test linear,
// only the calls of this round, against the rows finished since it began.
func (c *crashTest) checkRows(round int, when string) map[string]types.Execution {
	full := round%10 == 9 || round == c.rounds-1
	filter := types.ExecutionFilter{Limit: 1 << 30}
	if !full {
		filter.Since = c.roundStart.Add(-time.Second)
	}
	rows := map[string]types.Execution{}
	count := 0
	for _, run := range crashRuns {
		filter.RunID = run
		list, err := c.st.ListExecutions(context.Background(), filter)
		if err != nil {
			c.t.Fatal(err)
		}
		count += len(list)
		for _, r := range list {
			// reconcile names its calls reconcile-1, -2, ... afresh each
			// time it runs; the test's own call ids are unique.
			if _, dup := rows[r.CallID]; dup && !strings.HasPrefix(r.CallID, "reconcile-") {
				c.t.Fatalf("seed %d round %d %s: two execution rows of call %s", c.seed, round, when, r.CallID)
			}
			rows[r.CallID] = r
		}
	}
	if full {
		c.n.rows = count
	}
	for _, cl := range c.calls {
		if !cl.answered || (!full && cl.round != round) {
			continue
		}
		row, ok := rows[cl.id]
		if !ok {
			c.t.Fatalf("seed %d round %d %s: call %s (%s %s) was answered %s but has no execution row",
				c.seed, round, when, cl.id, cl.op.tool, cl.op.order, cl.res.Code())
		}
		if row.Code != cl.res.Code() || row.Replayed != cl.res.Meta.Replayed || row.Verified != cl.res.Meta.Verified {
			c.t.Fatalf("seed %d round %d %s: call %s was answered %s (replayed %v, verified %v), its row says %s (%v, %v)",
				c.seed, round, when, cl.id, cl.res.Code(), cl.res.Meta.Replayed, cl.res.Meta.Verified, row.Code, row.Replayed, row.Verified)
		}
	}
	return rows
}

// listOps lists the ledger's operations in one status.
func (c *crashTest) listOps(status types.OpStatus) []types.Operation {
	ops, err := c.st.ListOperations(context.Background(), status, 1<<30)
	if err != nil {
		c.t.Fatal(err)
	}
	return ops
}

// ledger maps each order to its operation in the ledger.
func (c *crashTest) ledger() map[string]*types.Operation {
	m := map[string]*types.Operation{}
	for _, status := range []types.OpStatus{types.OpStarted, types.OpUnknown, types.OpCompleted} {
		for _, op := range c.listOps(status) {
			order := c.orderOf(op)
			if _, dup := m[order]; dup {
				c.t.Fatalf("seed %d: two operations of %s in the ledger", c.seed, order)
			}
			m[order] = &op
		}
	}
	return m
}

func (c *crashTest) orderOf(op types.Operation) string {
	var args struct {
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal(op.Args, &args); err != nil || args.OrderID == "" {
		c.t.Fatalf("operation %s: args %s: %v", op.Key, op.Args, err)
	}
	return args.OrderID
}

// checkNoRace fails when the server's race detector reported a race.
func (c *crashTest) checkNoRace(srv *proc) {
	if s := srv.out.String(); strings.Contains(s, "DATA RACE") {
		c.t.Fatalf("seed %d: toolgate reported a data race:\n%s", c.seed, s)
	}
}

func (c *crashTest) summary(took time.Duration) {
	n := c.n
	line := fmt.Sprintf("crash test (seed %d, %s): rounds=%d calls_sent=%d answered=%d unanswered=%d execution_rows=%d "+
		"operations=%d ledger_operations=%d downstream_effects=%d duplicates=%d "+
		"kills: not_reached=%d started_at_kill=%d (before_send=%d in_flight=%d) committed_unanswered=%d; "+
		"started_after_restart=%d unknown_before_settling=%d unknown_after_settling=%d settled_by_verify=%d settled_by_resend_under_key=%d "+
		"reconcile_runs=%d reconcile_settled=%d lost_for_good=%d twin_repeats=%d answers_replayed=%d answers_verified=%d answer_codes=%v",
		c.seed, took.Round(time.Millisecond), n.rounds, n.callsSent, n.callsAnswered, n.callsUnanswered, n.rows,
		n.operations, n.ledgerOps, n.effects, n.duplicates,
		n.notReached, n.startedAtKill, n.killedBeforeSend, n.killedInFlight, n.committedUnanswered,
		n.startedAfterRestart, n.unknownBeforeSettling, n.unknownAfterSettling, n.settledByVerify, n.settledByResend,
		n.reconcileRuns, n.reconcileSettled, n.lostOps, n.twins, n.replayed, n.verifiedAnswer, n.codes)
	c.t.Log(line)
	fmt.Println(line)
}

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
