package pipeline_test

import (
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// An approval stays bound to the config version that judged its call: after
// a reload to another version the same call needs a fresh approval, and
// after a reload back to the version that judged it the approval admits it.
func TestReloadKeepsApprovalsBoundToTheirVersion(t *testing.T) {
	b := setup(t, setupOpts{mutate: approvalRule})
	first := b.gw.Config().Version
	held := b.call("issue_refund", refundArgs(800000))
	if held.Code() != types.CodeApprovalRequired {
		t.Fatalf("want approval_required, got %s", held.Code())
	}
	decide(t, b, held.Meta.ApprovalID, true, "")

	reload := func(mutate func(*config.Config)) string {
		t.Helper()
		cfg := refundsConfig(b.srv.URL, 1, false)
		approvalRule(cfg)
		if mutate != nil {
			mutate(cfg)
		}
		out, err := b.gw.Reload(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out.Version
	}
	if v := reload(func(c *config.Config) { c.Tools["issue_refund"].Description = "Refund an order (new wording)." }); v == first {
		t.Fatal("a changed config kept its version")
	}
	res := b.call("issue_refund", refundArgs(800000))
	if res.Code() != types.CodeApprovalRequired || res.Meta.ApprovalID == held.Meta.ApprovalID {
		t.Fatalf("under a new version: %s approval %s, want a fresh approval", res.Code(), res.Meta.ApprovalID)
	}
	if b.payments.Counts().Requests != 0 {
		t.Fatal("an approval of another version let the call through")
	}

	if v := reload(nil); v != first {
		t.Fatalf("the same config got another version: %s vs %s", v, first)
	}
	done := b.call("issue_refund", refundArgs(800000))
	if !done.OK || done.Meta.ApprovalID != held.Meta.ApprovalID {
		t.Fatalf("back under the version that judged it: %s approval %s: %s", done.Code(), done.Meta.ApprovalID, done.Observation)
	}
	if c := b.payments.Counts(); c.Refunds != 1 {
		t.Fatalf("refunds = %d, want 1", c.Refunds)
	}
}
