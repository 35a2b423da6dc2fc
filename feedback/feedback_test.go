package feedback

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/normalise"
	"github.com/toolgate/toolgate/types"
)

func TestAdvice(t *testing.T) {
	meta := types.Meta{Tool: "issue_refund", Attempts: 1}
	tests := []struct {
		code       types.Code
		effect     types.Effect
		facts      Facts
		delivered  bool
		next       types.Next
		verifyWith string
		says       []string
	}{
		{types.CodeUnknownTool, "", Facts{}, false, types.NextFixArgs, "", nil},
		{types.CodeMissingArguments, types.EffectWrite, Facts{}, false, types.NextFixArgs, "", nil},
		{types.CodeForbidden, types.EffectWrite, Facts{}, false, types.NextEscalate, "", nil},
		{"over_limit", types.EffectWrite, Facts{}, false, types.NextUseOtherTool, "", nil},
		{types.CodeNotOwner, types.EffectWrite, Facts{}, false, types.NextStop, "", nil},
		{types.CodeTimeoutUnknownOutcome, types.EffectWrite, Facts{Dependency: "payments", VerifyWith: "list_refunds"}, true, types.NextVerify, "list_refunds", []string{"MAY", "list_refunds", "payments"}},
		{types.CodeTimeoutUnknownOutcome, types.EffectWrite, Facts{Dependency: "payments", ReadTools: []string{"get_order", "list_refunds"}}, true, types.NextVerify, "",
			[]string{"MAY", "Do not retry this write", "Verify with a read first", "get_order and list_refunds take the same arguments", "escalate"}},
		{types.CodeTimeoutUnknownOutcome, types.EffectWrite, Facts{ReadTools: []string{"get_order"}}, true, types.NextVerify, "",
			[]string{"Do not retry this write", "get_order takes the same arguments"}},
		{types.CodeTimeoutUnknownOutcome, types.EffectWrite, Facts{}, true, types.NextVerify, "",
			[]string{"Do not retry this write", "Verify with a read first", "a read tool", "escalate"}},
		{types.CodeUpstreamError, types.EffectWrite, Facts{ReadTools: []string{"a", "b", "c"}}, true, types.NextVerify, "",
			[]string{"MAY", "Do not retry this write", "a, b and c take the same arguments"}},
		{types.CodeUnknownOutcome, types.EffectWrite, Facts{VerifyWith: "list_refunds", RetryAfter: 5 * time.Second}, true, types.NextVerify, "list_refunds", []string{"5 seconds", "escalate"}},
		{types.CodeUnknownOutcome, types.EffectWrite, Facts{}, true, types.NextVerify, "", []string{"Escalate"}},
		{types.CodeCircuitOpen, types.EffectWrite, Facts{Dependency: "payments", RetryAfter: 42 * time.Second}, false, types.NextWait, "", []string{"42 seconds", "Nothing was done"}},
		{types.CodeRateLimited, types.EffectRead, Facts{RetryAfter: 7 * time.Second}, false, types.NextWait, "", []string{"7 seconds"}},
		{types.CodeUpstreamError, types.EffectWrite, Facts{VerifyWith: "list_refunds"}, true, types.NextVerify, "list_refunds", []string{"MAY"}},
		{types.CodeUpstreamError, types.EffectRead, Facts{}, true, types.NextRetry, "", []string{"safe to try again"}},
		{types.CodeConnectFailed, types.EffectWrite, Facts{}, false, types.NextRetry, "", []string{"Nothing was done"}},
		{types.CodeRejected, types.EffectWrite, Facts{Status: 422}, true, types.NextFixArgs, "", []string{"same answer"}},
		{types.CodeRejected, types.EffectWrite, Facts{Status: 403}, true, types.NextEscalate, "", nil},
		{types.CodeRejected, types.EffectWrite, Facts{Status: 409}, true, types.NextStop, "", nil},
		{types.CodeDuplicateInFlight, types.EffectWrite, Facts{RetryAfter: time.Second}, true, types.NextWait, "", []string{"running right now"}},
		{types.CodeIdempotencyConflict, types.EffectWrite, Facts{}, false, types.NextStop, "", nil},
		{types.CodeStepBudgetExhausted, types.EffectWrite, Facts{}, false, types.NextStop, "", nil},
		{types.CodeInternalError, types.EffectWrite, Facts{}, false, types.NextEscalate, "", nil},
		{types.CodeApprovalRequired, types.EffectWrite, Facts{}, false, types.NextWait, "", []string{"approve"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.code, tt.effect), func(t *testing.T) {
			r := types.Fail(tt.code, "the message.", meta)
			normalise.Settle(r, tt.effect, tt.delivered)
			tt.facts.Effect = tt.effect
			Annotate(r, &tt.facts)
			if r.Meta.Next != tt.next {
				t.Errorf("next = %s, want %s", r.Meta.Next, tt.next)
			}
			if r.Meta.VerifyWith != tt.verifyWith {
				t.Errorf("verify_with = %q, want %q", r.Meta.VerifyWith, tt.verifyWith)
			}
			if r.Meta.Next == types.NextWait && r.Meta.RetryAfterMS <= 0 {
				t.Errorf("wait advice without retry_after_ms")
			}
			if !strings.Contains(r.Observation, string(tt.code)) || !strings.Contains(r.Observation, "the message.") {
				t.Errorf("observation does not say what happened: %q", r.Observation)
			}
			for _, s := range tt.says {
				if !strings.Contains(r.Observation, s) {
					t.Errorf("observation lacks %q: %q", s, r.Observation)
				}
			}
		})
	}
}

func TestSuccessObservation(t *testing.T) {
	r := types.OK(json.RawMessage(`{"refund_id":"RF-99203","amount_paise":425000}`), types.Meta{Tool: "issue_refund", Attempts: 2, ElapsedMS: 812})
	Annotate(r, &Facts{Dependency: "payments"})
	for _, s := range []string{"issue_refund succeeded on payments", "2 attempts", "812 ms", "RF-99203", "425000"} {
		if !strings.Contains(r.Observation, s) {
			t.Errorf("observation lacks %q: %s", s, r.Observation)
		}
	}
	if r.Meta.Next != types.NextContinue || r.Meta.Omitted != nil {
		t.Errorf("next=%s omitted=%v", r.Meta.Next, r.Meta.Omitted)
	}
}

// An answer nested too deep is carried whole as text: the observation says
// so, and does not claim that anything was cut.
func TestDeepAnswerObservation(t *testing.T) {
	r := types.OK(json.RawMessage(`"[[[[1]]]]"`), types.Meta{Tool: "get_tree"})
	Annotate(r, &Facts{DataDepth: 130, MaxBytes: 4096})
	if !strings.Contains(r.Observation, "nested 130 levels deep") || strings.Contains(r.Observation, "showing") {
		t.Errorf("observation: %s", r.Observation)
	}
	if r.Meta.Omitted == nil || r.Meta.Omitted.Depth != 130 || r.Meta.Omitted.TotalBytes != 0 {
		t.Errorf("meta.omitted = %+v, want depth 130 and nothing cut", r.Meta.Omitted)
	}
}

func TestReplayObservation(t *testing.T) {
	at := time.Date(2026, 11, 30, 11, 4, 14, 0, time.UTC)
	r := types.OK(json.RawMessage(`{"refund_id":"RF-1"}`), types.Meta{Tool: "issue_refund", Replayed: true, IdempotencyKey: "refund:ORD-1:5:r1"})
	Annotate(r, &Facts{CompletedAt: at})
	for _, s := range []string{"already done", "2026-11-30T11:04:14Z", "refund:ORD-1:5:r1", "nothing was sent again"} {
		if !strings.Contains(r.Observation, s) {
			t.Errorf("observation lacks %q: %s", s, r.Observation)
		}
	}
}

func TestTruncation(t *testing.T) {
	items := make([]map[string]any, 500)
	for i := range items {
		items[i] = map[string]any{"refund_id": fmt.Sprintf("RF-%05d", i), "amount_paise": 1000 + i}
	}
	list, _ := json.Marshal(items)
	wrapped, _ := json.Marshal(map[string]any{"order_id": "ORD-1", "refunds": items})
	long, _ := json.Marshal(strings.Repeat("é", 5000))
	tests := []struct {
		name      string
		data      json.RawMessage
		field     string
		listCut   bool
		wantTotal int
	}{
		{"top-level list", list, "", true, 500},
		{"list field", wrapped, "refunds", true, 500},
		{"long string", long, "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := types.OK(tt.data, types.Meta{Tool: "list_refunds", Attempts: 1})
			Annotate(r, &Facts{MaxBytes: 1024})
			if len(r.Observation) > 1024 {
				t.Errorf("observation is %d bytes, over the 1024 limit", len(r.Observation))
			}
			om := r.Meta.Omitted
			if om == nil {
				t.Fatal("meta.omitted not set")
			}
			if tt.listCut {
				if om.Total != tt.wantTotal || om.Shown <= 0 || om.Shown >= om.Total || om.Field != tt.field {
					t.Errorf("omitted = %+v", om)
				}
				if !strings.Contains(r.Observation, fmt.Sprintf("showing %d of %d", om.Shown, om.Total)) {
					t.Errorf("observation does not say what was left out: %s", r.Observation)
				}
			} else {
				if om.ShownBytes <= 0 || om.TotalBytes != len(tt.data) {
					t.Errorf("omitted = %+v (data %d bytes)", om, len(tt.data))
				}
				if !strings.Contains(r.Observation, "bytes") {
					t.Errorf("observation does not say bytes were cut: %s", r.Observation)
				}
			}
			if string(r.Data) != string(tt.data) {
				t.Error("data must still carry the whole result")
			}
		})
	}
}

// TestCompactFastPath checks that the success path's shortcut (writing data
// as it is when it has no whitespace outside strings) gives what Render
// gives, and that it is taken only for such data.
func TestCompactFastPath(t *testing.T) {
	for _, tc := range []struct {
		data    string
		compact bool
	}{
		{`{"ok":1}`, true},
		{`{"a":"x y\tz"}`, true},
		{`{"a":"quote \" then space"}`, true},
		{`["<b>&amp;</b>","é"]`, true},
		{`{"a": 1}`, false},
		{"{\"a\":1}\n", false},
		{`{"a":"\\"} `, false},
		{`{"broken":`, true},
		{``, false},
	} {
		if got := compact([]byte(tc.data)); got != tc.compact {
			t.Errorf("compact(%q) = %v, want %v", tc.data, got, tc.compact)
		}
		if tc.compact {
			if text, om := Render([]byte(tc.data), 4096); text != tc.data || om != nil {
				t.Errorf("Render(%q) = %q, %v; the fast path writes the data as it is", tc.data, text, om)
			}
		}
	}
}
