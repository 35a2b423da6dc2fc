package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
)

const opsKey = "ops-person-key-0123456789"

// scopedKey may call list_refunds alone: it sees that tool's figures only.
const scopedKey = "reader-key-0123456789abc"

var approvalsYAML = approvalsConfig()

// approvalsConfig is approvalsYAML with moreKeys (auth.keys entries)
// after support-bot's.
func approvalsConfig(moreKeys ...string) string {
	keys := append(append([]string{"{name: support-bot, key: " + supportKey + "}"}, moreKeys...),
		"{name: ops, key: "+opsKey+", approver: true}", "{name: scoped, key: "+scopedKey+", tools: [list_refunds]}")
	return refunds.Config("PROVIDER",
		server("sqlite:toolgate.db", keys...),
		refunds.Delete("tools.get_order", "tools.issue_refund.permission", "tools.issue_refund.owner", "tools.issue_refund.state"),
		refunds.Set("tools.issue_refund.input_schema", plainRefundArgs),
		refunds.Set("tools.issue_refund.idempotency", `{key: "refund:{order_id}:{amount_paise}:{run_id}"}`),
		refunds.Set("tools.issue_refund.rules", `[{deny: "args.amount_paise > 100000", approval: true, message: "Refunds above 100000 paise need a supervisor's approval."}]`),
		refunds.Delete("tools.issue_refund.verify.result"))
}

// The approval round trip, the monitoring endpoints and the dashboard, on
// the real binary.
func TestApprovalsAndMonitoringEndpoints(t *testing.T) {
	prov := startProvider(t)
	srv := startServe(t, strings.ReplaceAll(approvalsYAML, "PROVIDER", prov.URL()))
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	refund := func(amount int) *types.Result {
		return srv.call("r1", supportKey, "issue_refund", fmt.Sprintf(`{"order_id":"ORD-4471","amount_paise":%d}`, amount))
	}
	held := refund(250000)
	if held.Code() != types.CodeApprovalRequired || held.Meta.ApprovalID == "" || held.Meta.Next != types.NextWait {
		t.Fatalf("want approval_required: %s %+v", held.Code(), held.Meta)
	}
	id := held.Meta.ApprovalID
	if a := srv.post("/v1/approvals/"+id, supportKey, `{"decision":"approve","by":"the bot itself"}`); a.status != http.StatusForbidden {
		t.Fatalf("the agent's key approved its own call: %d %s", a.status, a.body)
	}
	if a := srv.get("/v1/approvals?status=pending", opsKey); a.status != http.StatusOK || !strings.Contains(string(a.body), id) {
		t.Fatalf("pending approvals: %d %s", a.status, a.body)
	}
	if a := srv.post("/v1/approvals/"+id, opsKey, `{"decision":"approve","by":"alice"}`); a.status != http.StatusOK {
		t.Fatalf("approve: %d %s", a.status, a.body)
	}
	if done := refund(250000); !done.OK {
		t.Fatalf("after approval: %s: %s", done.Code(), done.Observation)
	}
	if again := refund(250000); !again.OK || !again.Meta.Replayed {
		t.Fatalf("repeat: %s replayed=%v", again.Code(), again.Meta.Replayed)
	}
	other := refund(300000)
	if other.Code() != types.CodeApprovalRequired {
		t.Fatalf("changed amount: %s", other.Code())
	}
	srv.post("/v1/approvals/"+other.Meta.ApprovalID, opsKey, `{"decision":"deny","by":"alice","comment":"already compensated"}`)
	if denied := refund(300000); denied.Code() != types.CodeApprovalDenied || denied.Meta.Next != types.NextStop {
		t.Fatalf("denied: %s %s", denied.Code(), denied.Meta.Next)
	}
	if c := prov.Counts(); c.Refunds != 1 {
		t.Fatalf("provider made %d refunds, want 1", c.Refunds)
	}

	checks := []struct {
		path, key string
		status    int
		says      []string
	}{
		{"/", "", http.StatusOK, []string{"<title>toolgate</title>", "/assets/app.js"}},
		{"/assets/overview.js", "", http.StatusOK, []string{"/v1/stats"}},
		{"/runs/r1", "", http.StatusOK, []string{"<title>toolgate</title>", "/assets/run.js"}},
		{"/assets/vendor/uPlot.iife.min.js", "", http.StatusOK, []string{"uPlot"}},
		{"/metrics", opsKey, http.StatusOK, []string{`toolgate_calls_total{class="refused",code="approval_required",tool="issue_refund"} 2`, "toolgate_breaker_state"}},
		// /metrics names every tool: no key, or an agent's key, is refused.
		{"/metrics", "", http.StatusUnauthorized, nil},
		{"/metrics", supportKey, http.StatusForbidden, []string{"approver key", "metrics_listen"}},
		{"/v1/stats?window=1h", supportKey, http.StatusOK, []string{`"issue_refund"`, `"calls":5`, `"approval_required":2`, `"timeout_pressure"`,
			`"refused":3`, `"dependency_errors":0`, `"percentile_method":"nearest-rank"`}},
		// A key that may call list_refunds alone sees nothing of issue_refund.
		{"/v1/stats?window=1h", scopedKey, http.StatusOK, []string{`"tools":{}`}},
		{"/v1/stats/series?tool=issue_refund&window=1h", scopedKey, http.StatusOK, []string{`"points":[]`, `"timeout_ms":0`}},
		{"/v1/stats?window=forever", supportKey, http.StatusBadRequest, []string{`"bad_request"`}},
		{"/v1/stats/series?tool=issue_refund&window=1h", supportKey, http.StatusOK, []string{`"points"`, `"timeout_ms":10000`}},
		{"/v1/alerts", supportKey, http.StatusOK, []string{`"alerts"`}},
		{"/v1/breakers", supportKey, http.StatusOK, []string{`"dependency":"payments"`, `"state":"closed"`}},
		{"/v1/stats", "", http.StatusUnauthorized, []string{`"unauthorized"`}},
	}
	for _, c := range checks {
		a := srv.get(c.path, c.key)
		if a.status != c.status {
			t.Errorf("GET %s: %d, want %d: %.300s", c.path, a.status, c.status, a.body)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(string(a.body), s) {
				t.Errorf("GET %s lacks %q: %.500s", c.path, s, a.body)
			}
		}
	}
}
