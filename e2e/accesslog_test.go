package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// accessYAML is holdYAML with a read that answers at once.
const accessYAML = holdYAML + `  get_order:
    description: Look up one order.
    dependency: payments
    request: {method: GET, path: "/orders/{order_id}"}
    effect: read
    input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}}
    retry: {max_attempts: 1}
`

// callLines are the per-call lines (msg=call) of a text log.
func callLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, " msg=call ") {
			out = append(out, line)
		}
	}
	return out
}

var stepField = regexp.MustCompile(` step=(\d+) `)

// With --access-log, every call gets exactly one line in the file, those
// answered while SIGTERM drains the calls in flight included, and none on
// standard error.
func TestAccessLogKeepsOneLinePerCallThroughSIGTERM(t *testing.T) {
	const reads, held = 10, 10
	prov, arrived, release := heldProvider(t)
	path := filepath.Join(t.TempDir(), "access.log")
	srv := startServe(t, strings.ReplaceAll(accessYAML, "PROVIDER", prov.URL()), "--shutdown-timeout", "2m", "--access-log", path)
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"},"state":{"refunded_paise":0}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	for range reads {
		if res := srv.call("r1", supportKey, "get_order", `{"order_id":"ORD-4471"}`); !res.OK {
			t.Fatalf("get_order: %+v", res)
		}
	}
	outcomes := make(chan callOutcome, held)
	for i := range held {
		go sendCall(srv.base, "r1", fmt.Sprintf(`{"tool":"hold_refund","args":{"order_id":"ORD-4471","amount_paise":%d}}`, 1000+i), outcomes)
	}
	waitArrivals(t, arrived, held)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.waitLine("shutting down")
	release()
	for range held {
		if o := <-outcomes; o.err != nil || o.status != http.StatusOK || !o.res.OK {
			t.Errorf("call in flight: HTTP %d %v %+v", o.status, o.err, o.res)
		}
	}
	if code := srv.exitCode(); code != 0 {
		t.Fatalf("toolgate exited %d after SIGTERM:\n%s", code, srv.out)
	}
	client.CloseIdleConnections()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := callLines(string(data))
	var steps []int
	for _, line := range lines {
		m := stepField.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("access log line without a step: %s", line)
		}
		n, _ := strconv.Atoi(m[1])
		steps = append(steps, n)
	}
	slices.Sort(steps)
	want := make([]int, reads+held)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(steps, want) {
		t.Fatalf("access log has the steps %v, want each of 1..%d once:\n%s", steps, reads+held, data)
	}
	if got := callLines(srv.out.String()); len(got) != 0 {
		t.Errorf("%d per-call lines on standard error with --access-log, want none:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// By default the log has no line for an ordinary call; a call whose side
// effect is unknown is still logged (at warn).
func TestDefaultLogHasNoLinePerCall(t *testing.T) {
	srv, _ := suite(t)
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":`+principal+`}`)
	for range 5 {
		if res := srv.call("r1", supportKey, "get_order", `{"order_id":"ORD-4471"}`); !res.OK {
			t.Fatalf("get_order: %+v", res)
		}
	}
	srv.call("r1", supportKey, "broken_read", `{}`)
	srv.call("r1", supportKey, "refund_unverified", `{"order_id":"ORD-4471","amount_paise":31}`)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := srv.exitCode(); code != 0 {
		t.Fatalf("toolgate exited %d after SIGTERM:\n%s", code, srv.out)
	}
	client.CloseIdleConnections()
	lines := callLines(srv.out.String())
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "tool=refund_unverified") {
		t.Fatalf("per-call lines on standard error: %q, want only the unknown outcome's, at warn:\n%s", lines, srv.out)
	}
}
