package pipeline_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// approvalRule turns refundsConfig's over-limit deny rule into a request for a
// person's approval.
func approvalRule(cfg *config.Config) {
	cfg.Tools["issue_refund"].Rules[0] = config.Rule{
		Deny:     "args.amount_paise > principal.limits.max_refund_paise",
		Approval: true,
		Message:  "Refunds above {principal.limits.max_refund_paise} paise need a supervisor's approval.",
	}
}

func decide(t *testing.T, b *bundle, id string, approve bool, comment string) {
	t.Helper()
	if _, err := b.gw.Decide(context.Background(), id, approve, "supervisor@example.com", comment); err != nil {
		t.Fatalf("decide %s: %v", id, err)
	}
}

func TestApprovalRoundTrip(t *testing.T) {
	b := setup(t, setupOpts{honourKeys: true, mutate: approvalRule})
	held := b.call("issue_refund", refundArgs(800000))
	if held.Code() != types.CodeApprovalRequired || held.Meta.Next != types.NextWait || held.Meta.ApprovalID == "" || held.Meta.RetryAfterMS <= 0 {
		t.Fatalf("want approval_required with an id, got %s %+v", held.Code(), held.Meta)
	}
	if b.payments.Counts().Requests != 0 {
		t.Fatal("a held call reached the provider")
	}
	// The same call again while pending: the same request, not a new one.
	again := b.call("issue_refund", refundArgs(800000))
	if again.Meta.ApprovalID != held.Meta.ApprovalID {
		t.Errorf("a repeat made a new approval request: %s vs %s", again.Meta.ApprovalID, held.Meta.ApprovalID)
	}
	// Other arguments need their own approval.
	other := b.call("issue_refund", refundArgs(700000))
	if other.Code() != types.CodeApprovalRequired || other.Meta.ApprovalID == held.Meta.ApprovalID {
		t.Errorf("changed args: %s %s", other.Code(), other.Meta.ApprovalID)
	}
	decide(t, b, held.Meta.ApprovalID, true, "")
	done := b.call("issue_refund", refundArgs(800000))
	if !done.OK || done.Meta.ApprovalID != held.Meta.ApprovalID {
		t.Fatalf("after approval: %s: %s", done.Code(), done.Observation)
	}
	replay := b.call("issue_refund", refundArgs(800000))
	if !replay.OK || !replay.Meta.Replayed {
		t.Fatalf("repeat after execution: %s replayed=%v", replay.Code(), replay.Meta.Replayed)
	}
	if c := b.payments.Counts(); c.Refunds != 1 {
		t.Fatalf("refunds = %d, want 1", c.Refunds)
	}
	// The other amount is still waiting.
	if still := b.call("issue_refund", refundArgs(700000)); still.Code() != types.CodeApprovalRequired {
		t.Errorf("the other call was let through by an approval of different args: %s", still.Code())
	}
	pending, _ := b.gw.Approvals(context.Background(), store.ApprovalPending, 10)
	if len(pending) != 1 || pending[0].ID != other.Meta.ApprovalID {
		t.Errorf("pending approvals = %+v", pending)
	}
}

func TestApprovalDenied(t *testing.T) {
	b := setup(t, setupOpts{mutate: approvalRule})
	held := b.call("issue_refund", refundArgs(800000))
	decide(t, b, held.Meta.ApprovalID, false, "customer already compensated")
	res := b.call("issue_refund", refundArgs(800000))
	if res.Code() != types.CodeApprovalDenied || res.Meta.Next != types.NextStop {
		t.Fatalf("got %s next=%s", res.Code(), res.Meta.Next)
	}
	for _, s := range []string{"denied", "customer already compensated", held.Meta.ApprovalID} {
		if !strings.Contains(res.Observation, s) {
			t.Errorf("observation lacks %q: %s", s, res.Observation)
		}
	}
	if b.payments.Counts().Requests != 0 {
		t.Fatal("a denied call reached the provider")
	}
}

// An approval given under one config does not carry over to another, and
// an approval expires.
func TestApprovalBoundToConfigAndTime(t *testing.T) {
	b := setup(t, setupOpts{mutate: approvalRule})
	held := b.call("issue_refund", refundArgs(800000))
	decide(t, b, held.Meta.ApprovalID, true, "")

	// A second gateway on the same store, with a changed config.
	cfg := refundsConfig(b.srv.URL, 1, false)
	approvalRule(cfg)
	cfg.Tools["issue_refund"].Description = "Refund an order (new wording)."
	gw2, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: b.gw.Store(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw2.Close()
	res, err := gw2.Call(context.Background(), b.run.ID, "issue_refund", refundArgs(800000))
	if err != nil {
		t.Fatal(err)
	}
	if res.Code() != types.CodeApprovalRequired || res.Meta.ApprovalID == held.Meta.ApprovalID {
		t.Fatalf("config change: %s approval %s", res.Code(), res.Meta.ApprovalID)
	}

	// Expiry: past the TTL the approval no longer admits the call.
	b.clock.Advance(config.DefaultApprovalTTL + time.Minute)
	expired := b.call("issue_refund", refundArgs(800000))
	if expired.Code() != types.CodeApprovalRequired || expired.Meta.ApprovalID == held.Meta.ApprovalID {
		t.Fatalf("after expiry: %s approval %s", expired.Code(), expired.Meta.ApprovalID)
	}
	if b.payments.Counts().Requests != 0 {
		t.Fatal("nothing should have been sent")
	}
}

func TestApprovedConcurrentRepeatsExecuteOnce(t *testing.T) {
	b := setup(t, setupOpts{mutate: approvalRule})
	held := b.call("issue_refund", refundArgs(800000))
	decide(t, b, held.Meta.ApprovalID, true, "")
	var wg sync.WaitGroup
	results := make([]*types.Result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = b.call("issue_refund", refundArgs(800000))
		}()
	}
	wg.Wait()
	for _, r := range results {
		if !r.OK {
			t.Fatalf("a repeat failed: %s: %s", r.Code(), r.Observation)
		}
	}
	if c := b.payments.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Fatalf("provider saw %+v, want one refund", c)
	}
}

// An approval admits an action past the rules that asked for it, never
// past a flat deny rule: once approved, the rules are checked again with
// the approval rules passed over.
func TestApprovedActionStillMeetsDenyRules(t *testing.T) {
	b := setup(t, setupOpts{honourKeys: true, mutate: func(cfg *config.Config) {
		approvalRule(cfg)
		tool := cfg.Tools["issue_refund"]
		tool.Rules = append(tool.Rules, config.Rule{Deny: "args.amount_paise > 750000", Message: "Refunds above 750000 paise are never made here."})
	}})
	held := b.call("issue_refund", refundArgs(800000))
	if held.Code() != types.CodeApprovalRequired {
		t.Fatalf("want approval_required first, got %s: %s", held.Code(), held.Observation)
	}
	decide(t, b, held.Meta.ApprovalID, true, "")
	res := b.call("issue_refund", refundArgs(800000))
	if res.OK || res.Code() == types.CodeApprovalRequired || !strings.Contains(res.Observation, "never made here") {
		t.Fatalf("approved but denied by a flat rule: got %s: %s", res.Code(), res.Observation)
	}
	if b.payments.Counts().Requests != 0 {
		t.Fatal("an approved action a deny rule refuses reached the provider")
	}
}

// TestExhaustedRunAsksForNoApproval: a run with no steps left is answered
// step_budget_exhausted before any I/O of stage 1, so a call that would
// need a person's approval creates no approval request for nobody to use.
func TestExhaustedRunAsksForNoApproval(t *testing.T) {
	b := setup(t, setupOpts{honourKeys: true, mutate: approvalRule, maxSteps: 1})
	// The run's one step: any call takes it.
	if res := b.call("get_order", map[string]any{"order_id": "ORD-1"}); res.Code() == types.CodeStepBudgetExhausted {
		t.Fatalf("first call: %s", res.Code())
	}
	res := b.call("issue_refund", refundArgs(800000))
	if res.Code() != types.CodeStepBudgetExhausted || res.Meta.ApprovalID != "" {
		t.Fatalf("want step_budget_exhausted with no approval, got %s (approval %q)", res.Code(), res.Meta.ApprovalID)
	}
	if pending, _ := b.gw.Approvals(context.Background(), store.ApprovalPending, 10); len(pending) != 0 {
		t.Errorf("an exhausted run created approval requests: %+v", pending)
	}
}
