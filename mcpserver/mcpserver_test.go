package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// transport connects a client session to toolgate's MCP server over the
// refunds config against a fresh provider.
type transport struct {
	name    string
	connect func(t *testing.T) (*mcp.ClientSession, *sim.Payments)
}

var transports = []transport{
	{"stdio", func(t *testing.T) (*mcp.ClientSession, *sim.Payments) {
		p, url := provider(t)
		return connectStdio(t, writeConfig(t, configText(t, url))), p
	}},
	{"http", func(t *testing.T) (*mcp.ClientSession, *sim.Payments) {
		p, url := provider(t)
		gw := gateway(t, configText(t, url))
		_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
		return connectHTTP(t, endpoint, supportKey), p
	}},
}

// forEachTransport runs a test over stdio and over streamable HTTP.
func forEachTransport(t *testing.T, test func(t *testing.T, cs *mcp.ClientSession, p *sim.Payments)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			cs, p := tr.connect(t)
			test(t, cs, p)
		})
	}
}

func TestListTools(t *testing.T) {
	cfg, err := config.Parse([]byte(configText(t, "http://127.0.0.1:1")), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, idempotent, destructive bool }
	want := map[string]hints{
		"get_order":       {readOnly: true, idempotent: true},
		"list_refunds":    {readOnly: true, idempotent: true},
		"set_refund_note": {idempotent: true, destructive: true},
		"issue_refund":    {destructive: true},
	}
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, _ *sim.Payments) {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			spec := cfg.Tools[tool.Name]
			if spec == nil {
				t.Errorf("tool %q is not in the config", tool.Name)
				continue
			}
			if tool.Description != spec.Description {
				t.Errorf("%s: description %q, want %q", tool.Name, tool.Description, spec.Description)
			}
			if !sameJSON(t, tool.InputSchema, spec.InputSchema) {
				t.Errorf("%s: inputSchema %s, want the config's %s", tool.Name, mustJSON(t, tool.InputSchema), mustJSON(t, spec.InputSchema))
			}
			a := tool.Annotations
			h := want[tool.Name]
			if a == nil || a.ReadOnlyHint != h.readOnly || a.IdempotentHint != h.idempotent ||
				a.DestructiveHint == nil || *a.DestructiveHint != h.destructive {
				t.Errorf("%s: annotations %s, want %+v", tool.Name, mustJSON(t, a), h)
			}
			if a != nil && (a.OpenWorldHint == nil || !*a.OpenWorldHint) {
				t.Errorf("%s: an HTTP tool should have openWorldHint true, got %s", tool.Name, mustJSON(t, a))
			}
			switch {
			case spec.OutputSchema == nil && tool.OutputSchema != nil:
				t.Errorf("%s declares no output schema but lists %s", tool.Name, mustJSON(t, tool.OutputSchema))
			case spec.OutputSchema != nil:
				if !sameJSON(t, tool.OutputSchema, mcpserver.EnvelopeSchema(spec.OutputSchema)) {
					t.Errorf("%s: outputSchema %s, want the envelope around the declared schema", tool.Name, mustJSON(t, tool.OutputSchema))
				}
			}
		}
		if want := []string{"get_order", "issue_refund", "list_refunds", "set_refund_note"}; !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})
}

func TestCallSucceeds(t *testing.T) {
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, _ *sim.Payments) {
		res, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil)
		if res.IsError || !env.OK {
			t.Fatalf("get_order failed: %s", env.Observation)
		}
		var order sim.Order
		if err := json.Unmarshal(env.Data, &order); err != nil || order.CustomerID != "cust_42" {
			t.Errorf("data %s, want the order of cust_42", env.Data)
		}
		if env.Meta.Tool != "get_order" || !strings.HasPrefix(env.Meta.RunID, "mcp_") || !strings.HasPrefix(env.Meta.CallID, "mcp_") {
			t.Errorf("meta %+v: want tool get_order, the session's run mcp_..., a call id mcp_...", env.Meta)
		}
		// The output schema describes the envelope: data is there, as declared.
		if !strings.Contains(env.Observation, "cust_42") {
			t.Errorf("observation %q does not show the order", env.Observation)
		}
	})
}

func TestCallFailsValidation(t *testing.T) {
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, p *sim.Payments) {
		res, env := mustCall(t, cs, "issue_refund", map[string]any{"order_id": "4471", "amount_paise": 100}, nil)
		if !res.IsError || env.OK {
			t.Fatalf("want a refusal, got %s", env.Observation)
		}
		if env.Error == nil || env.Error.Code != types.CodeInvalidArgument {
			t.Fatalf("error %+v, want invalid_argument", env.Error)
		}
		if env.Meta.Next != types.NextFixArgs || env.Meta.SideEffect != types.SideEffectNone {
			t.Errorf("meta next %q side_effect %q, want fix_args and none", env.Meta.Next, env.Meta.SideEffect)
		}
		if !strings.Contains(env.Observation, "order_id") {
			t.Errorf("observation %q does not name the argument", env.Observation)
		}
		if c := p.Counts(); c.Requests != 0 {
			t.Errorf("the provider got %d refund requests, want 0", c.Requests)
		}
	})
}

func TestWriteDedupedOnRepeat(t *testing.T) {
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, p *sim.Payments) {
		args := map[string]any{"order_id": orderID, "amount_paise": 425000, "reason": "damaged"}
		_, first := mustCall(t, cs, "issue_refund", args, nil)
		if !first.OK || first.Meta.Replayed {
			t.Fatalf("first refund: ok %t replayed %t: %s", first.OK, first.Meta.Replayed, first.Observation)
		}
		res, second := mustCall(t, cs, "issue_refund", args, nil)
		if res.IsError || !second.OK || !second.Meta.Replayed {
			t.Fatalf("repeat: ok %t replayed %t, want a replay of the first: %s", second.OK, second.Meta.Replayed, second.Observation)
		}
		if second.Meta.RunID != first.Meta.RunID || second.Meta.Step != first.Meta.Step+1 {
			t.Errorf("the repeat ran in run %s step %d; want the session's run %s, step %d",
				second.Meta.RunID, second.Meta.Step, first.Meta.RunID, first.Meta.Step+1)
		}
		if c := p.Counts(); c.Requests != 1 || c.Refunds != 1 {
			t.Errorf("the provider got %d refund requests and made %d refunds, want 1 and 1", c.Requests, c.Refunds)
		}
	})
}

func TestUnknownToolIsInvalidParams(t *testing.T) {
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, _ *sim.Payments) {
		_, err := call(t, cs, "refund_everything", map[string]any{}, nil)
		e := rpcError(t, err)
		if e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("code %d, want %d", e.Code, jsonrpc.CodeInvalidParams)
		}
		if !strings.Contains(e.Message, "issue_refund") || !strings.Contains(e.Message, "get_order") {
			t.Errorf("message %q does not list the available tools", e.Message)
		}
		var env types.Result
		if err := json.Unmarshal(e.Data, &env); err != nil || env.Error == nil || env.Error.Code != types.CodeUnknownTool {
			t.Errorf("data %s, want the unknown_tool envelope", e.Data)
		}
	})
}

func TestMalformedCalls(t *testing.T) {
	cases := []struct {
		name string
		args any
		meta mcp.Meta
		want string
	}{
		{"arguments an array", []int{1, 2}, nil, "arguments must be a JSON object"},
		{"arguments a string", "ORD-4471", nil, "arguments must be a JSON object"},
		{"run id not a string", map[string]any{"order_id": orderID}, mcp.Meta{mcpserver.MetaRunID: 7}, "must be a string"},
		{"run id malformed", map[string]any{"order_id": orderID}, mcp.Meta{mcpserver.MetaRunID: "../r1"}, "a run id is"},
		{"call id too long", map[string]any{"order_id": orderID}, mcp.Meta{mcpserver.MetaCallID: strings.Repeat("x", 300)}, "the limit is 256"},
		{"usage not counts", map[string]any{"order_id": orderID}, mcp.Meta{mcpserver.MetaUsage: map[string]any{"input_tokens": "many"}}, "whole numbers"},
	}
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, _ *sim.Payments) {
		for _, c := range cases {
			_, err := call(t, cs, "get_order", c.args, c.meta)
			e := rpcError(t, err)
			if e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, c.want) {
				t.Errorf("%s: error %d %q, want %d containing %q", c.name, e.Code, e.Message, jsonrpc.CodeInvalidParams, c.want)
			}
		}
	})
}

func TestMetaNamesRunAndCall(t *testing.T) {
	forEachTransport(t, func(t *testing.T, cs *mcp.ClientSession, _ *sim.Payments) {
		meta := mcp.Meta{mcpserver.MetaRunID: "conversation-7", mcpserver.MetaCallID: "toolu_01",
			mcpserver.MetaUsage: map[string]any{"input_tokens": 812, "output_tokens": 64}}
		_, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, meta)
		if env.Meta.RunID != "conversation-7" || env.Meta.CallID != "toolu_01" || env.Meta.Step != 1 {
			t.Errorf("meta %+v, want run conversation-7, call toolu_01, step 1", env.Meta)
		}
		// A call without _meta goes to the session's own run.
		_, own := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil)
		if own.Meta.RunID == "conversation-7" || own.Meta.Step != 1 {
			t.Errorf("without _meta the call went to run %s step %d, want the session's run, step 1", own.Meta.RunID, own.Meta.Step)
		}
		_, again := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, mcp.Meta{mcpserver.MetaRunID: "conversation-7"})
		if again.Meta.RunID != "conversation-7" || again.Meta.Step != 2 {
			t.Errorf("meta %+v, want run conversation-7 step 2", again.Meta)
		}
	})
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(mustJSON(t, a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(t, b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
