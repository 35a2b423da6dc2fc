package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// Recorded refunds of one customer over two runs, re-judged under a new
// quota of 500000 an hour: the calls past the quota are listed, the first
// two are not, another customer's are not, and nothing is sent.
func TestWhatifQuota(t *testing.T) {
	p := sim.NewPayments()
	srv := httptest.NewServer(p)
	defer srv.Close()
	cfgPath := writeConfig(t, srv.URL)
	newPath := writeConfigAs(t, filepath.Join(filepath.Dir(cfgPath), "toolgate.new.yaml"),
		refunds.Set("tools.issue_refund.quotas", `[{name: per_customer, key: "{principal.id}", amount: args.amount_paise, limit: 500000, window: 1h}]`))

	ctx := context.Background()
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: cfgPath, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run, customer, order string
		amount               int
	}{
		{"r1", "cust_42", "ORD-1", 200000}, {"r2", "cust_42", "ORD-2", 200000},
		{"r1", "cust_42", "ORD-3", 200000}, {"r3", "cust_7", "ORD-4", 400000}, {"r2", "cust_42", "ORD-5", 100000},
	} {
		if _, err := gw.GetRun(ctx, c.run); err != nil {
			if _, err := gw.StartRun(ctx, toolgate.RunOptions{ID: c.run, Principal: toolgate.Principal{ID: c.customer}}); err != nil {
				t.Fatal(err)
			}
		}
		if res, _ := gw.Call(ctx, c.run, "issue_refund", map[string]any{"order_id": c.order, "amount_paise": c.amount}); !res.OK {
			t.Fatalf("%s: %s", c.order, res.Observation)
		}
	}
	gw.Close()
	before := p.Counts()

	var out, errOut bytes.Buffer
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"whatif", "--config", newPath, "--since", "24h", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Judged  int `json:"judged"`
		Changes []struct {
			Args json.RawMessage `json:"args"`
			Now  struct {
				Allowed bool
				Code    string
				Message string
			}
		} `json:"changes"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	// ORD-3 (600000 with it) is over; ORD-5 (500000 with it) fits.
	if rep.Judged != 5 || len(rep.Changes) != 1 {
		t.Fatalf("judged %d, changes %d; want 5 and 1:\n%s", rep.Judged, len(rep.Changes), out.String())
	}
	if c := rep.Changes[0]; !strings.Contains(string(c.Args), "ORD-3") || c.Now.Code != "quota_exceeded" || !strings.Contains(c.Now.Message, "400000 of 500000") {
		t.Errorf("change = %+v (args %s), want ORD-3 quota_exceeded", c, c.Args)
	}
	if after := p.Counts(); after != before {
		t.Errorf("what-if reached the provider: %+v -> %+v", before, after)
	}
}
