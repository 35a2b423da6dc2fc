package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// catalogueValidator is refundConfig with two keys: support-bot sees the
// refund tools, shipper only ship_order and ping.
func catalogueValidator(t *testing.T) *Validator {
	t.Helper()
	cfg := refundConfig(t)
	cfg.Auth.Keys = []config.Key{
		{Name: "support-bot", Key: "support-key-0123456789", Tools: []string{"get_order", "list_refunds", "issue_refund"}},
		{Name: "shipper", Key: "shipper-key-0123456789", Tools: []string{"ship_*", "ping"}},
	}
	v, err := Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCheckHonoursTheKeysCatalogue: a tool outside the key's list is
// unknown_tool, and the message names only the key's tools (no
// suggestion of a hidden one either).
func TestCheckHonoursTheKeysCatalogue(t *testing.T) {
	v := catalogueValidator(t)
	tests := []struct {
		name, key, tool, args string
		code                  types.Code // "" = allowed
		contains, excludes    []string
	}{
		{name: "a hidden tool is unknown", key: "shipper", tool: "issue_refund", args: `{"order_id":"ORD-1","amount_paise":5}`,
			code:     types.CodeUnknownTool,
			contains: []string{`no tool named "issue_refund"`, "Available tools: ping, ship_order."},
			excludes: []string{"get_order", "list_refunds", "Did you mean issue_refund"}},
		{name: "no suggestion of a hidden tool", key: "shipper", tool: "issue_refunds", args: `{}`,
			code: types.CodeUnknownTool, excludes: []string{"issue_refund?"}},
		{name: "a visible tool runs", key: "shipper", tool: "ping", args: `{}`},
		{name: "a visible tool keeps its permission check", key: "support-bot", tool: "issue_refund",
			args: `{"order_id":"ORD-1","amount_paise":5}`, code: types.CodeForbidden},
		{name: "a typo lists the key's tools", key: "support-bot", tool: "get_ordr", args: `{}`, code: types.CodeUnknownTool,
			contains: []string{"Did you mean get_order?", "Available tools: get_order, issue_refund, list_refunds."},
			excludes: []string{"ping", "ship_order"}},
		{name: "no key sees every tool", key: "", tool: "ping", args: `{}`},
		{name: "a key the config no longer has sees none", key: "gone", tool: "ping", args: `{}`,
			code: types.CodeUnknownTool, contains: []string{"No tools are available to this run's API key"}, excludes: []string{"ship_order"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := v.Check(&Input{Tool: tt.tool, Args: []byte(tt.args), Principal: bob, Key: tt.key})
			if tt.code == "" {
				if r != nil {
					t.Fatalf("refused %s: %s", r.Code, r.Message)
				}
				return
			}
			if r == nil || r.Code != tt.code {
				t.Fatalf("refusal %+v, want %s", r, tt.code)
			}
			for _, c := range tt.contains {
				if !strings.Contains(r.Message, c) {
					t.Errorf("message lacks %q:\n%s", c, r.Message)
				}
			}
			for _, c := range tt.excludes {
				if strings.Contains(r.Message, c) {
					t.Errorf("message reveals %q:\n%s", c, r.Message)
				}
			}
		})
	}
}

// TestCompileNamesAnUnmatchedEntry: `toolgate check` (Compile) reports a
// tools: entry that matches no tool, naming the entry and the key.
func TestCompileNamesAnUnmatchedEntry(t *testing.T) {
	cfg := refundConfig(t)
	cfg.Auth.Keys = []config.Key{{Name: "support-bot", Key: "support-key-0123456789", Tools: []string{"get_order", "crm_*"}}}
	_, err := Compile(cfg, nil)
	var p *Problem
	if !errors.As(err, &p) || p.Key != "auth.keys[0].tools[1]" {
		t.Fatalf("Compile: %v, want a *Problem at auth.keys[0].tools[1]", err)
	}
	if !strings.Contains(err.Error(), `auth.keys[0].tools[1]: "crm_*" (key support-bot) matches no tool`) {
		t.Errorf("error %q does not name the entry and the key", err)
	}
}
