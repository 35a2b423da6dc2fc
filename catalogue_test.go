package toolgate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// TestRunsSeeTheirKeysCatalogue: a run owned by a key calls only the tools
// of that key's list; the refusal of another tool is unknown_tool and names
// only the key's tools.
func TestRunsSeeTheirKeysCatalogue(t *testing.T) {
	ctx := t.Context()
	echo := func(ctx context.Context, args json.RawMessage) (any, error) { return map[string]any{"ok": true}, nil }
	tool := func(perm string) *config.Tool {
		return &config.Tool{Description: "A tool.", Effect: "read", Permission: perm, Func: echo}
	}
	cfg := &config.Config{
		Auth: config.Auth{Keys: []config.Key{
			{Name: "support-bot", Key: "support-key-0123456789", Tools: []string{"orders_*"},
				Principal: &types.Principal{ID: "cust_42"}},
			{Name: "ops", Key: "ops-key-0123456789abc"},
		}},
		Tools: map[string]*config.Tool{
			"orders_get": tool(""), "orders_refund": tool("refunds:write"), "admin_wipe": tool(""),
		},
	}
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()

	cat := gw.Catalogue("support-bot")
	if want := []string{"orders_get", "orders_refund"}; !slices.Equal(cat.Callable, want) {
		t.Errorf("callable %v, want %v", cat.Callable, want)
	}
	if want := []string{"orders_get"}; !slices.Equal(cat.Listed, want) {
		t.Errorf("listed %v, want %v (the pinned principal lacks refunds:write)", cat.Listed, want)
	}

	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: types.Principal{ID: "cust_42"}, Owner: "support-bot"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool     string
		code     types.Code
		excludes string
	}{
		{"admin_wipe", types.CodeUnknownTool, "admin_wipe"},
		{"orders_get", "", ""},
		{"orders_refund", types.CodeForbidden, ""},
	}
	for _, tt := range tests {
		res, err := gw.Call(ctx, run.ID, tt.tool, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Code() != tt.code && !(tt.code == "" && res.OK) {
			t.Errorf("%s: %s (%s), want %q", tt.tool, res.Code(), res.Observation, tt.code)
		}
		if tt.code == types.CodeUnknownTool {
			msg := res.Error.Message
			if !strings.Contains(msg, "Available tools: orders_get, orders_refund.") || strings.Contains(msg[strings.Index(msg, "Available"):], tt.excludes) {
				t.Errorf("%s: message %q, want only the key's tools", tt.tool, msg)
			}
		}
	}

	// ops has no list: every tool.
	opsRun, _ := gw.StartRun(ctx, toolgate.RunOptions{Principal: types.Principal{ID: "ops"}, Owner: "ops"})
	if res, _ := gw.Call(ctx, opsRun.ID, "admin_wipe", nil); !res.OK {
		t.Errorf("ops calling admin_wipe: %s", res.Observation)
	}
}
