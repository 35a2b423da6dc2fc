package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

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
