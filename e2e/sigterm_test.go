package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

// holdYAML has one write the provider holds (sim Hold) until the test
// lets it go; PROVIDER is replaced by the provider's URL.
const holdYAML = `store: sqlite:toolgate.db
auth:
  keys:
    - {name: support-bot, key: ` + supportKey + `}
dependencies:
  payments: {base_url: "PROVIDER"}
tools:
  hold_refund:
    description: Refund an order (the provider holds it until the test lets go).
    dependency: payments
    request: {method: POST, path: /refunds}
    effect: write
    input_schema: {type: object, required: [order_id, amount_paise], properties: {order_id: {type: string}, amount_paise: {type: integer}}}
    timeout: {connect: 1s, read: 2m}
    retry: {max_attempts: 1}
    state:
      refunded_paise: "state.refunded_paise + args.amount_paise"
`

// heldProvider starts a provider whose refunds wait for release; each
// arrival is announced on arrived. release is closed at the test's end at
// the latest, before the provider stops.
func heldProvider(t *testing.T) (prov *provider, arrived <-chan int, release func()) {
	prov = startProvider(t)
	in := make(chan int, 64)
	gate := make(chan struct{})
	prov.Hold = func(n int) <-chan struct{} {
		in <- n
		return gate
	}
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return prov, in, release
}

// waitArrivals waits for n refunds to reach the provider.
func waitArrivals(t *testing.T, arrived <-chan int, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for i := 0; i < n; i++ {
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("only %d of %d calls reached the provider within a minute", i, n)
		}
	}
}

// sendCall posts one call in the background and reports its outcome.
func sendCall(base, runID, body string, out chan<- callOutcome) {
	r, _ := http.NewRequest("POST", base+"/v1/runs/"+runID+"/calls", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+supportKey)
	r.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(r)
	if err != nil {
		out <- callOutcome{err: err}
		return
	}
	defer resp.Body.Close()
	var res types.Result
	err = json.NewDecoder(resp.Body).Decode(&res)
	out <- callOutcome{status: resp.StatusCode, res: &res, err: err}
}

type callOutcome struct {
	status int
	res    *types.Result
	err    error
}

// SIGTERM while 20 calls are in flight: the server stops accepting, lets
// them finish, answers them, records them all, and exits 0.
func TestSIGTERMDrainsCallsInFlight(t *testing.T) {
	const n = 20
	prov, arrived, release := heldProvider(t)
	srv := startServe(t, strings.ReplaceAll(holdYAML, "PROVIDER", prov.URL()), "--shutdown-timeout", "2m")
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"drain","principal":{"id":"cust_42"},"state":{"refunded_paise":0}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	outcomes := make(chan callOutcome, n)
	for i := range n {
		go sendCall(srv.base, "drain", fmt.Sprintf(`{"tool":"hold_refund","args":{"order_id":"ORD-4471","amount_paise":%d}}`, 1000+i), outcomes)
	}
	waitArrivals(t, arrived, n)

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.waitLine("shutting down")
	release()

	answered, failed := 0, 0
	for range n {
		o := <-outcomes
		switch {
		case o.err == nil && o.status == http.StatusOK && o.res.OK:
			answered++
		default:
			failed++
			t.Errorf("call in flight: HTTP %d %v %+v", o.status, o.err, o.res)
		}
	}
	if code := srv.exitCode(); code != 0 {
		t.Fatalf("toolgate exited %d after SIGTERM:\n%s", code, srv.out)
	}
	client.CloseIdleConnections()

	// Reopen the SQLite file the server used: every call is recorded.
	st, err := sqlite.Open(context.Background(), filepath.Join(srv.dir, "toolgate.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.ListExecutions(context.Background(), types.ExecutionFilter{RunID: types.ScopedRunID("support-bot", "drain"), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, r := range rows {
		if r.OK {
			ok++
		}
	}
	run, err := st.GetRun(context.Background(), types.ScopedRunID("support-bot", "drain"))
	if err != nil {
		t.Fatal(err)
	}
	refunds := prov.Counts().Refunds
	t.Logf("SIGTERM with %d calls in flight: %d answered 200 ok, %d failed; %d rows recorded (%d ok); the provider made %d refunds; state %s",
		n, answered, failed, len(rows), ok, refunds, run.State)
	if answered != n || len(rows) != n || ok != n || refunds != n {
		t.Fatalf("lost calls: answered %d, recorded %d (%d ok), refunds %d, want %d each", answered, len(rows), ok, refunds, n)
	}
	if want := fmt.Sprintf(`{"refunded_paise":%d}`, n*1000+n*(n-1)/2); string(run.State) != want {
		t.Errorf("state %s, want %s", run.State, want)
	}
}

// A second SIGTERM ends the process at once, without waiting for the call
// in flight.
func TestSecondSIGTERMExitsAtOnce(t *testing.T) {
	prov, arrived, release := heldProvider(t)
	srv := startServe(t, strings.ReplaceAll(holdYAML, "PROVIDER", prov.URL()), "--shutdown-timeout", "10m")
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"},"state":{"refunded_paise":0}}`)
	outcomes := make(chan callOutcome, 1)
	go sendCall(srv.base, "r1", `{"tool":"hold_refund","args":{"order_id":"ORD-4471","amount_paise":1000}}`, outcomes)
	waitArrivals(t, arrived, 1)

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.waitLine("shutting down")
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := srv.exitCode(); code != 1 {
		t.Fatalf("exit %d after a second SIGTERM, want 1:\n%s", code, srv.out)
	}
	srv.waitLine("second signal")
	if o := <-outcomes; o.err == nil {
		t.Errorf("the call in flight was answered (%d) though the process exited", o.status)
	}
	release()
	client.CloseIdleConnections()
}
