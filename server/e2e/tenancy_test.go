package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

// tenancyYAML is approvalsYAML with a second agent host's key.
var tenancyYAML = strings.Replace(approvalsYAML, "    - {name: ops,", "    - {name: other-bot, key: "+otherKey+"}\n    - {name: ops,", 1)

// An approval is usable only from the run that asked for it: another
// key's run asserting the same principal is never told its id and cannot
// consume it, before or after the decision.
func TestApprovalOnlyForTheRunThatAsked(t *testing.T) {
	prov := startProvider(t)
	srv := startServe(t, strings.ReplaceAll(tenancyYAML, "PROVIDER", prov.URL()))
	for _, r := range []struct{ key, run string }{{supportKey, "a1"}, {otherKey, "b1"}} {
		if a := srv.post("/v1/runs", r.key, `{"run_id":"`+r.run+`","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
			t.Fatalf("create run %s: %d %s", r.run, a.status, a.body)
		}
	}
	const refund = `{"order_id":"ORD-4471","amount_paise":250000}`
	held := srv.call("a1", supportKey, "issue_refund", refund)
	if held.Code() != types.CodeApprovalRequired || held.Meta.ApprovalID == "" {
		t.Fatalf("a1: %s %+v", held.Code(), held.Meta)
	}
	id := held.Meta.ApprovalID
	// B's identical call while A's is pending: its own request, not A's id.
	other := srv.call("b1", otherKey, "issue_refund", refund)
	if other.Code() != types.CodeApprovalRequired || other.Meta.ApprovalID == id || strings.Contains(other.Observation, id) {
		t.Fatalf("b1 was told a1's approval %s: %s %+v %q", id, other.Code(), other.Meta, other.Observation)
	}
	if a := srv.post("/v1/approvals/"+id, opsKey, `{"decision":"approve","by":"alice"}`); a.status != http.StatusOK {
		t.Fatalf("approve: %d %s", a.status, a.body)
	}
	// B repeats first: still waiting for its own approval; nothing is sent.
	if again := srv.call("b1", otherKey, "issue_refund", refund); again.Code() != types.CodeApprovalRequired || again.Meta.ApprovalID != other.Meta.ApprovalID {
		t.Fatalf("b1 after a1's approval: %s %+v", again.Code(), again.Meta)
	}
	if c := prov.Counts(); c.Refunds != 0 {
		t.Fatalf("the provider made %d refunds for b1", c.Refunds)
	}
	if done := srv.call("a1", supportKey, "issue_refund", refund); !done.OK {
		t.Fatalf("a1 after approval: %s: %s", done.Code(), done.Observation)
	}
	if c := prov.Counts(); c.Refunds != 1 {
		t.Fatalf("the provider made %d refunds, want 1", c.Refunds)
	}
	checkIntact(t, srv, "a1", supportKey, 2)
	checkIntact(t, srv, "b1", otherKey, 2)
}
