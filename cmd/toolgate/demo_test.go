package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// The acceptance check: the incident at speed 10 makes three
// refunds through the textbook loop and one through toolgate, both ways.
func TestDemoRefundsOnce(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, []string{"demo", "--speed", "10", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	type scenario struct {
		Requests      int   `json:"requests"`
		Refunds       int   `json:"refunds"`
		PaidPaise     int64 `json:"paid_paise"`
		ReplayMatches *bool `json:"replay_matches"`
		Verified      *bool `json:"verified"`
	}
	var rep struct {
		Naive              scenario `json:"naive"`
		ToolgateIdempotent scenario `json:"toolgate_idempotent"`
		ToolgateVerify     scenario `json:"toolgate_verify"`
		ToolgateMCP        scenario `json:"toolgate_mcp"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if got := rep.Naive.Refunds; got != 3 {
		t.Errorf("naive refunds = %d, want 3", got)
	}
	// Over MCP: one create_refund request (the write timed out and was not
	// sent again), one refund, and the model's repeat answered verified.
	if m := rep.ToolgateMCP; m.Requests != 1 || m.Refunds != 1 || m.Verified == nil || !*m.Verified {
		t.Errorf("toolgate_mcp: requests %d, refunds %d, verified %v; want 1, 1, true", m.Requests, m.Refunds, m.Verified)
	}
	for k, s := range map[string]scenario{"toolgate_idempotent": rep.ToolgateIdempotent, "toolgate_verify": rep.ToolgateVerify, "toolgate_mcp": rep.ToolgateMCP} {
		if s.Refunds != 1 || s.PaidPaise != 425000 {
			t.Errorf("%s: refunds = %d, paid %d, want 1 and 425000", k, s.Refunds, s.PaidPaise)
		}
		if s.ReplayMatches == nil || !*s.ReplayMatches {
			t.Errorf("%s: replay does not match", k)
		}
	}
}

func TestUsageAndUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, []string{"frobnicate"}); code != 2 {
		t.Errorf("unknown command exit = %d, want 2", code)
	}
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, []string{"demo", "--speed", "-1"}); code != 2 {
		t.Errorf("bad flag exit = %d, want 2", code)
	}
	out.Reset()
	if code := run(context.Background(), &env{stdout: &out, stderr: &out}, []string{"demo", "--help"}); code != 0 || !bytes.Contains(out.Bytes(), []byte("Example:")) {
		t.Errorf("--help exit = %d, output %q", code, out.String())
	}
}
