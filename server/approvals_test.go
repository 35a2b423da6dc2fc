package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

const opsKey = "ops-key-0123456789xyz"

// withApprovals adds an operator key and a write tool whose large amounts
// need a person's approval; paid counts the tool's executions.
func withApprovals(paid *atomic.Int32) func(*config.Config) {
	return func(cfg *config.Config) {
		cfg.Auth.Keys = append(cfg.Auth.Keys, config.Key{Name: "ops", Key: opsKey, Approver: true})
		cfg.Tools["pay"] = &config.Tool{Description: "Pays an amount.", Effect: types.EffectWrite,
			InputSchema: map[string]any{"type": "object", "required": []any{"amount"},
				"properties": map[string]any{"amount": map[string]any{"type": "integer"}}},
			Rules: []config.Rule{{Deny: "args.amount > 1000", Approval: true, Message: "Payments above 1000 need a person's approval."}},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return map[string]any{"payment": paid.Add(1)}, nil
			}}
	}
}

func TestApprovalRoundTripOverHTTP(t *testing.T) {
	var paid atomic.Int32
	b := setup(t, setupOpts{config: withApprovals(&paid)})
	run := b.startRun(alphaKey, `{"principal":{"id":"cust_1"}}`)
	call := func(amount int) *types.Result {
		resp := b.post("/v1/runs/"+run+"/calls", alphaKey, fmt.Sprintf(`{"tool":"pay","args":{"amount":%d}}`, amount))
		if resp.status != http.StatusOK {
			t.Fatalf("call: %d %s", resp.status, resp.body)
		}
		return resp.envelope(t)
	}
	held := call(5000)
	if held.Code() != types.CodeApprovalRequired || held.Meta.ApprovalID == "" || held.Meta.Next != types.NextWait {
		t.Fatalf("want approval_required, got %s %+v", held.Code(), held.Meta)
	}
	id := held.Meta.ApprovalID

	// The agent's own key sees its run's request but may not decide it.
	var list struct {
		Approvals []ApprovalDocument `json:"approvals"`
	}
	b.get("/v1/approvals?status=pending", alphaKey).decode(t, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].ID != id || string(list.Approvals[0].Args) != `{"amount":5000}` {
		t.Fatalf("pending for alpha: %+v", list.Approvals)
	}
	if resp := b.post("/v1/approvals/"+id, alphaKey, `{"decision":"approve","by":"the agent"}`); resp.status != http.StatusForbidden {
		t.Fatalf("an agent key approved its own call: %d %s", resp.status, resp.body)
	}
	// Another agent's key does not see it at all.
	if resp := b.get("/v1/approvals/"+id, betaKey); resp.status != http.StatusNotFound {
		t.Errorf("beta sees alpha's approval: %d", resp.status)
	}
	for _, bad := range []string{`{"decision":"maybe","by":"x"}`, `{"decision":"approve"}`, `{"decision":"approve","by":"x","extra":1}`} {
		if resp := b.post("/v1/approvals/"+id, opsKey, bad); resp.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, resp.status)
		}
	}
	resp := b.post("/v1/approvals/"+id, opsKey, `{"decision":"approve","by":"alice","comment":"checked"}`)
	if resp.status != http.StatusOK {
		t.Fatalf("approve: %d %s", resp.status, resp.body)
	}
	var doc ApprovalDocument
	resp.decode(t, &doc)
	if doc.Status != "approved" || doc.By != "alice" {
		t.Errorf("decided: %+v", doc)
	}
	if resp := b.post("/v1/approvals/"+id, opsKey, `{"decision":"deny","by":"bob"}`); resp.status != http.StatusConflict {
		t.Errorf("second decision: %d", resp.status)
	}
	// The model repeats the call: it runs, once.
	if done := call(5000); !done.OK || done.Meta.ApprovalID != id {
		t.Fatalf("after approval: %s: %s", done.Code(), done.Observation)
	}
	if again := call(5000); !again.OK || !again.Meta.Replayed {
		t.Fatalf("repeat: %s replayed=%v", again.Code(), again.Meta.Replayed)
	}
	// Changed arguments need a new approval.
	if other := call(6000); other.Code() != types.CodeApprovalRequired || other.Meta.ApprovalID == id {
		t.Fatalf("changed args: %s %s", other.Code(), other.Meta.ApprovalID)
	}
	if paid.Load() != 1 {
		t.Fatalf("paid %d times, want 1", paid.Load())
	}
	// A denial reaches the model as a clear stop.
	list.Approvals = nil
	b.get("/v1/approvals?status=pending", opsKey).decode(t, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("pending: %+v", list.Approvals)
	}
	b.post("/v1/approvals/"+list.Approvals[0].ID, opsKey, `{"decision":"deny","by":"alice","comment":"over budget"}`)
	denied := call(6000)
	if denied.Code() != types.CodeApprovalDenied || denied.Meta.Next != types.NextStop || !strings.Contains(denied.Observation, "over budget") {
		t.Fatalf("denied: %s %s: %s", denied.Code(), denied.Meta.Next, denied.Observation)
	}
	if resp := b.get("/v1/approvals?status=sometimes", opsKey); resp.status != http.StatusBadRequest {
		t.Errorf("bad status filter: %d", resp.status)
	}
}
