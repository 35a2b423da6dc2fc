package e2e

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

var admissionYAML = refunds.Config("PROVIDER",
	server("sqlite:toolgate.db", "{name: support-bot, key: "+supportKey+"}", "{name: ops, key: "+opsKey+", approver: true}"),
	refunds.Delete("tools.get_order", "tools.list_refunds"),
	refunds.Set("tools.issue_refund.input_schema", `{type: object, required: [order_id, amount_paise], properties: {order_id: {type: string}, amount_paise: {type: integer, minimum: 1}}}`),
	refunds.Delete("tools.issue_refund.permission", "tools.issue_refund.rules", "tools.issue_refund.owner", "tools.issue_refund.verify", "tools.issue_refund.state"))

// One durable write through `toolgate serve` on SQLite takes its step and
// begins its operation in one durable write (the store's AdmitAndBegin),
// then commits once: the store the server really uses (the SQLite store
// inside the metrics decorator) must keep that capability. The store-write
// histogram of /metrics says which writes were made.
func TestServeAdmitsAWriteInOneDurableWrite(t *testing.T) {
	prov := startProvider(t)
	srv := startServe(t, strings.ReplaceAll(admissionYAML, "PROVIDER", prov.URL()))
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	if res := srv.call("r1", supportKey, "issue_refund", `{"order_id":"ORD-4471","amount_paise":100}`); !res.OK {
		t.Fatalf("refund: %s: %s", res.Code(), res.Observation)
	}
	if c := prov.Counts(); c.Refunds != 1 {
		t.Fatalf("provider made %d refunds, want 1", c.Refunds)
	}
	a := srv.get("/metrics", opsKey) // /metrics needs an approver key
	if a.status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %.300s", a.status, a.body)
	}
	got := storeWrites(t, a.body)
	want := map[string]uint64{"admit_and_begin": 1, "admit_step": 0, "begin_operation": 0, "commit": 1}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("store writes op=%q: %d, want %d (all: %v)", op, got[op], n, got)
		}
	}
}

// storeWrites reads the sample counts of
// toolgate_store_commit_duration_seconds by op from a Prometheus text
// exposition.
func storeWrites(t *testing.T, exposition []byte) map[string]uint64 {
	t.Helper()
	const prefix = `toolgate_store_commit_duration_seconds_count{op="`
	counts := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		op, value, ok := strings.Cut(line, `"} `)
		if !ok {
			t.Fatalf("unexpected metrics line %q", sc.Text())
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		counts[op] = n
	}
	if len(counts) == 0 {
		t.Fatalf("no toolgate_store_commit_duration_seconds in /metrics:\n%.2000s", exposition)
	}
	return counts
}
