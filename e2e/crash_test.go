package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
