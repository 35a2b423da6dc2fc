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

// A recorded run re-judged with a lower refund limit lists exactly the calls
// above the new limit, and sends nothing to the provider.
func TestWhatifLowerLimit(t *testing.T) {
	p := sim.NewPayments()
	srv := httptest.NewServer(p)
	defer srv.Close()
	limit := func(paise string) refunds.Option {
		return refunds.Set("tools.issue_refund.rules", `[{deny: "args.amount_paise > `+paise+`", code: over_limit, message: "Refunds above `+paise+` paise need approval."}]`)
	}
	cfgPath := writeConfig(t, srv.URL, limit("500000"))
	newPath := writeConfigAs(t, filepath.Join(filepath.Dir(cfgPath), "toolgate.new.yaml"), limit("300000"))

	ctx := context.Background()
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: cfgPath, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "u"}})
	for _, amount := range []int{100000, 400000, 450000, 200000, 600000} {
		gw.Call(ctx, r1.ID, "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": amount})
	}
	gw.Close()
	before := p.Counts()

	var out, errOut bytes.Buffer
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"whatif", "--config", newPath, "--run", "r1", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Judged  int `json:"judged"`
		Changes []struct {
			Args json.RawMessage `json:"args"`
			Was  struct{ Allowed bool }
			Now  struct {
				Allowed bool
				Code    string
				Rule    string
			}
		} `json:"changes"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if rep.Judged != 5 || len(rep.Changes) != 2 {
		t.Fatalf("judged %d, changes %d; want 5 and 2:\n%s", rep.Judged, len(rep.Changes), out.String())
	}
	for i, want := range []string{"400000", "450000"} {
		c := rep.Changes[i]
		if !strings.Contains(string(c.Args), want) || !c.Was.Allowed || c.Now.Allowed || c.Now.Code != "over_limit" || !strings.Contains(c.Now.Rule, "300000") {
			t.Errorf("change %d = %+v (args %s), want %s allowed -> over_limit", i, c, c.Args, want)
		}
	}
	if after := p.Counts(); after != before {
		t.Errorf("what-if reached the provider: %+v -> %+v", before, after)
	}
	out.Reset()
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"whatif", "--config", newPath, "--since", "24h"}); code != 0 || !strings.Contains(out.String(), "2 would be judged differently") {
		t.Errorf("table output (exit %d):\n%s", code, out.String())
	}
}
