package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/types"
)

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
