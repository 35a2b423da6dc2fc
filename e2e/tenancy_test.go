package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

// tenancyYAML is approvalsYAML with a second agent host's key.
var tenancyYAML = approvalsConfig("{name: other-bot, key: " + otherKey + "}")

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
	// The approval records the approver's key beside the free-text by.
	if a := srv.get("/v1/approvals/"+id, opsKey); a.status != http.StatusOK || !strings.Contains(string(a.body), `"by":"alice","by_key":"ops"`) {
		t.Fatalf("the decided approval: %d %s", a.status, a.body)
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

// Run ids and operation keys are scoped to the key that owns the run:
// another key's run id is simply not there (no 409 that says it exists),
// and another key's identical operation is another operation, even under
// an operation key template without {run_id}.
func TestTenancyByKey(t *testing.T) {
	srv, rec := securitySuite(t) // support-bot owns r1
	if a := srv.post("/v1/runs", otherKey, `{"run_id":"r1","principal":{"id":"someone_else"}}`); a.status != http.StatusCreated ||
		!strings.Contains(string(a.body), `"run_id":"r1"`) || a.header.Get("Location") != "/v1/runs/r1" {
		t.Fatalf("other-bot creating its own r1: %d %s", a.status, a.body)
	}
	if a := srv.post("/v1/runs", otherKey, `{"run_id":"r1","principal":{"id":"someone_else"}}`); a.status != http.StatusConflict {
		t.Fatalf("other-bot creating r1 twice: %d %s", a.status, a.body)
	}
	for key, principal := range map[string]string{supportKey: "cust_42", otherKey: "someone_else"} {
		a := srv.get("/v1/runs/r1", key)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), `"id":"`+principal+`"`) || !strings.Contains(string(a.body), `"run_id":"r1"`) {
			t.Fatalf("r1 as seen by %s: %d %s", key[:5], a.status, a.body)
		}
	}

	const note = `{"order_id":"o1","text":"fragile"}`
	first := srv.call("r1", supportKey, "note_order", note)
	if !first.OK || first.Meta.Replayed || first.Meta.RunID != "r1" {
		t.Fatalf("support-bot: %s replayed=%v run=%q", first.Code(), first.Meta.Replayed, first.Meta.RunID)
	}
	if again := srv.call("r1", supportKey, "note_order", note); !again.OK || !again.Meta.Replayed {
		t.Fatalf("support-bot's repeat: %s replayed=%v", again.Code(), again.Meta.Replayed)
	}
	theirs := srv.call("r1", otherKey, "note_order", note)
	if !theirs.OK || theirs.Meta.Replayed || theirs.Meta.IdempotencyKey == first.Meta.IdempotencyKey {
		t.Fatalf("other-bot got support-bot's operation: %s replayed=%v key %q", theirs.Code(), theirs.Meta.Replayed, theirs.Meta.IdempotencyKey)
	}
	seen := rec.requests()
	if len(seen) != 2 || seen[0].header.Get("Idempotency-Key") == seen[1].header.Get("Idempotency-Key") {
		t.Fatalf("the dependency got %+v, want two operations with two keys", seen)
	}
	checkIntact(t, srv, "r1", supportKey, 2)
	checkIntact(t, srv, "r1", otherKey, 1)
	var list struct {
		Executions []types.Execution `json:"executions"`
	}
	srv.get("/v1/executions?run=r1", otherKey).decode(t, &list)
	if len(list.Executions) != 1 {
		t.Fatalf("other-bot's r1 has %d rows", len(list.Executions))
	}
}

// A key with a pinned principal cannot open a run for another principal,
// or with wider permissions or limits: 403 forbidden, nothing created.
func TestPinnedPrincipal(t *testing.T) {
	srv, _ := securitySuite(t)
	tests := []struct {
		name, principal string
		status          int
		says            string // in the error message, or in the run document
	}{
		{"another principal", `{"id":"cust_42"}`, 403, `principal "cust_42"`},
		{"a permission it lacks", `{"id":"cust_7","permissions":["refunds:write","admin"]}`, 403, `"admin"`},
		{"all permissions", `{"id":"cust_7","permissions":["*"]}`, 403, `"*"`},
		{"a wider limit", `{"id":"cust_7","limits":{"max_refund_paise":1000000000}}`, 403, `max_refund_paise`},
		{"a limit it does not have", `{"id":"cust_7","limits":{"max_discount":5}}`, 403, `max_discount`},
		{"other attributes", `{"id":"cust_7","attrs":{"tier":"platinum"}}`, 403, `tier`},
		{"narrower", `{"id":"cust_7","permissions":["orders:read"],"limits":{"max_refund_paise":1000}}`, 201,
			`"principal":{"id":"cust_7","permissions":["orders:read"],"limits":{"max_items":3,"max_refund_paise":1000},"attrs":{"tier":"gold"}}`},
		{"the same", `{"id":"cust_7","permissions":["refunds:write","orders:read"],"limits":{"max_refund_paise":500000,"max_items":3},"attrs":{"tier":"gold"}}`, 201,
			`"limits":{"max_items":3,"max_refund_paise":500000}`},
		{"left out", ``, 201,
			`"principal":{"id":"cust_7","permissions":["refunds:write","orders:read"],"limits":{"max_items":3,"max_refund_paise":500000},"attrs":{"tier":"gold"}}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"run_id":"p` + string(rune('a'+i)) + `"`
			if tt.principal != "" {
				body += `,"principal":` + tt.principal
			}
			a := srv.post("/v1/runs", pinnedKey, body+"}")
			said := string(a.body)
			if a.status == 403 {
				var res types.Result
				a.decode(t, &res)
				if res.Error == nil || res.Error.Code != types.CodeForbidden {
					t.Fatalf("want forbidden: %s", a.body)
				}
				said = res.Error.Message
			}
			if a.status != tt.status || !strings.Contains(said, tt.says) || a.status == 403 && !strings.Contains(string(a.body), `"next":"escalate"`) {
				t.Fatalf("HTTP %d %s, want %d saying %s", a.status, a.body, tt.status, tt.says)
			}
			if tt.status == 403 {
				if g := srv.get("/v1/runs/p"+string(rune('a'+i)), pinnedKey); g.status != http.StatusNotFound {
					t.Fatalf("a refused run exists: %d %s", g.status, g.body)
				}
			}
		})
	}
	// A key without a pinned principal still needs one in the body.
	if a := srv.post("/v1/runs", otherKey, `{"run_id":"x"}`); a.status != http.StatusBadRequest {
		t.Fatalf("no principal: %d %s", a.status, a.body)
	}
	if a := srv.get("/healthz", ""); a.status != http.StatusOK {
		t.Fatalf("healthz: %d", a.status)
	}
}
