package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// A tool whose answer breaks its output_schema: strict MCP clients (the
// TypeScript SDK) check structuredContent against the advertised
// outputSchema, so an ok: true with that answer as data would be a
// protocol error and the model would get no observation at all. It gets a
// clear failure instead, which says the refund was made; the test checks
// structuredContent against the listed outputSchema as such a client does
// (the Go SDK's client does not check it itself).
func TestAnswerNotMatchingOutputSchemaThroughTheSDKClient(t *testing.T) {
	t.Parallel()
	p, url := provider(t)
	gw := gateway(t, configText(t, url,
		refunds.Set("tools.issue_refund.output_schema", "{type: object, required: [refund_id], properties: {refund_id: {type: integer}}}")))
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)

	res, env := mustCall(t, cs, "issue_refund", map[string]any{"order_id": orderID, "amount_paise": 1000}, nil)
	strictClientCheck(t, cs, "issue_refund", res.StructuredContent)
	if !res.IsError || env.OK || env.Code() != types.CodeInvalidOutput || string(env.Data) != "null" {
		t.Fatalf("isError %v, envelope ok %v code %s data %s; want an invalid_output failure without data", res.IsError, env.OK, env.Code(), env.Data)
	}
	if env.Meta.SideEffect != types.SideEffectCommitted || env.Meta.Next != types.NextEscalate {
		t.Errorf("side_effect %s next %s, want committed (the refund was made) and escalate", env.Meta.SideEffect, env.Meta.Next)
	}
	for _, want := range []string{"at /refund_id", "WAS carried out", "do not repeat it"} {
		if !strings.Contains(env.Observation, want) {
			t.Errorf("observation %q lacks %q", env.Observation, want)
		}
	}
	if n := len(p.Refunds()); n != 1 {
		t.Errorf("%d refunds made, want 1", n)
	}
}

// strictClientCheck validates structuredContent against the outputSchema
// tools/list gives for the tool, as a strict client does.
func strictClientCheck(t *testing.T, cs *mcp.ClientSession, tool string, structured any) {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema any
	for _, tl := range list.Tools {
		if tl.Name == tool {
			schema = tl.OutputSchema
		}
	}
	if schema == nil {
		t.Fatalf("tools/list gives %s no outputSchema", tool)
	}
	b, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("output.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(structured)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err := sch.Validate(v); err != nil {
		t.Errorf("structuredContent does not match the outputSchema, a strict client rejects it: %v", err)
	}
}
