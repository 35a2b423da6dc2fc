package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

func TestApprovalsCommand(t *testing.T) {
	p := sim.NewPayments()
	srv := httptest.NewServer(p)
	defer srv.Close()
	cfgPath := writeConfig(t, srv.URL)
	raw, _ := os.ReadFile(cfgPath)
	raw = bytes.Replace(raw, []byte("    idempotency:"), []byte(
		"    rules:\n      - deny: \"args.amount_paise > 500000\"\n        approval: true\n        message: \"Large refunds need a supervisor.\"\n    idempotency:"), 1)
	os.WriteFile(cfgPath, raw, 0o600)

	ctx := context.Background()
	open := func() *toolgate.Gateway {
		gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: cfgPath, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return gw
	}
	gw := open()
	r, _ := gw.StartRun(ctx, toolgate.RunOptions{ID: "r1", Principal: toolgate.Principal{ID: "u"}})
	held, _ := gw.Call(ctx, r.ID, "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": 800000})
	gw.Close()
	if held.Code() != types.CodeApprovalRequired {
		t.Fatalf("got %s", held.Code())
	}
	id := held.Meta.ApprovalID

	cli := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, &env{stdout: &out, stderr: &out}, args)
		return code, out.String()
	}
	// The RULE column shows the rule as the config writes it, not its code.
	if code, out := cli("approvals", "list", "--config", cfgPath); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "800000") ||
		!strings.Contains(out, "args.amount_paise > 500000") {
		t.Fatalf("list (exit %d):\n%s", code, out)
	}
	if code, _ := cli("approvals", "approve", id, "--config", cfgPath); code != 2 {
		t.Errorf("approve without --by: exit %d, want 2", code)
	}
	if code, out := cli("approvals", "approve", "--config", cfgPath, "--by", "alice", id); code != 0 || !strings.Contains(out, "approved by alice") {
		t.Fatalf("approve (exit %d): %s", code, out)
	}
	if code, out := cli("approvals", "deny", id, "--config", cfgPath, "--by", "bob"); code != 1 || !strings.Contains(out, "already") {
		t.Errorf("second decision (exit %d): %s", code, out)
	}
	gw = open()
	defer gw.Close()
	res, _ := gw.Call(ctx, "r1", "issue_refund", map[string]any{"order_id": "ORD-1", "amount_paise": 800000})
	if !res.OK || p.Counts().Refunds != 1 {
		t.Fatalf("after approval: %s: %s", res.Code(), res.Observation)
	}
}
