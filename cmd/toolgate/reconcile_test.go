package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

// refundsOptions make the refunds fixture these commands' config: a
// verify read and no owner check or rules, on a SQLite store, the provider
// at ${PAYMENTS_URL}.
var refundsOptions = []refunds.Option{
	refunds.Set("store", "sqlite:tg.db"),
	refunds.Delete("tools.get_order", "tools.issue_refund.permission", "tools.issue_refund.input_schema.properties.reason",
		"tools.issue_refund.input_schema.properties.order_id.pattern", "tools.issue_refund.idempotency.header",
		"tools.issue_refund.rules", "tools.issue_refund.owner", "tools.issue_refund.state.refunded_paise"),
}

// writeConfig writes the refunds config, changed by opts, next to a fresh
// SQLite file, with the provider's URL.
func writeConfig(t *testing.T, providerURL string, opts ...refunds.Option) string {
	t.Helper()
	t.Setenv("PAYMENTS_URL", providerURL)
	return writeConfigAs(t, filepath.Join(t.TempDir(), "toolgate.yaml"), opts...)
}

// writeConfigAs writes the refunds config, changed by opts, at path: beside
// writeConfig's, a second config on the same store and provider.
func writeConfigAs(t *testing.T, path string, opts ...refunds.Option) string {
	t.Helper()
	text := refunds.Config("${PAYMENTS_URL}", append(slices.Clip(refundsOptions), opts...)...)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A process died after sending a refund and before recording it: the
// operation is left started. reconcile surfaces it as unknown, verifies it,
// and records the outcome, applying the state the lost call never applied.
func TestReconcileSettlesACrashedWrite(t *testing.T) {
	testReconcile(t, "refund:ORD-1:500:r1", true)
}

// An operation whose key the tool no longer derives (its idempotency.key
// changed) is never re-sent by reconcile: it stays unknown.
func TestReconcileNeverSendsAnOperationItCannotMatch(t *testing.T) {
	testReconcile(t, "refund-v1:ORD-1:500", false)
}

func testReconcile(t *testing.T, key string, settles bool) {
	p := sim.NewPayments()
	srv := httptest.NewServer(p)
	defer srv.Close()
	cfgPath := writeConfig(t, srv.URL)
	dbURL := "sqlite:" + filepath.Join(filepath.Dir(cfgPath), "tg.db")

	// The refund reached the provider...
	resp, err := srv.Client().Post(srv.URL+"/refunds", "application/json", strings.NewReader(`{"order_id":"ORD-1","amount_paise":500}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// ...and the process that sent it died with the operation started.
	ctx := context.Background()
	st, err := storeurl.Open(ctx, dbURL, storeurl.Options{Owner: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	argsHash := jsontext.Hash([]byte(`{"amount_paise":500,"order_id":"ORD-1"}`))
	if err := st.CreateRun(ctx, &types.Run{ID: "r1", Principal: types.Principal{ID: "u"}, State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.BeginOperation(ctx, &types.Operation{Key: key, ArgsHash: argsHash, RunID: "r1", Tool: "issue_refund",
		Args: json.RawMessage(`{"amount_paise":500,"order_id":"ORD-1"}`), Owner: "dead", LeaseUntil: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var out, errOut bytes.Buffer
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"reconcile", "--config", cfgPath}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := "1 settled, 0 still unknown"
	if !settles {
		want = "0 settled, 1 still unknown"
	}
	if !strings.Contains(out.String(), want) {
		t.Fatalf("output:\n%s", out.String())
	}
	if c := p.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Fatalf("reconcile sent the write again: %+v", c)
	}
	st, err = storeurl.Open(ctx, dbURL, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !settles {
		if ops, _ := st.ListOperations(ctx, types.OpUnknown, 10); len(ops) != 1 {
			t.Errorf("unknown operations: %+v, want the one", ops)
		}
		return
	}
	if ops, _ := st.ListOperations(ctx, types.OpUnknown, 10); len(ops) != 0 {
		t.Errorf("still unknown: %+v", ops)
	}
	run, _ := st.GetRun(ctx, "r1")
	if !strings.Contains(string(run.State), "RF-") {
		t.Errorf("state not applied: %s", run.State)
	}
}
