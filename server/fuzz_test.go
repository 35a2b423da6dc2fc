package server

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// FuzzDecodeCall feeds arbitrary bodies to the calls endpoint's decoding
// (seeds in testdata/fuzz/FuzzDecodeCall). It must never panic; a refusal
// is a 400 bad_request with a message; an accepted body is valid JSON no
// deeper than the limit, its args are an object kept byte for byte, and
// encoding the call again decodes to the same call.
func FuzzDecodeCall(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		call, e := decodeCall(body, DefaultMaxDepth)
		if (call == nil) == (e == nil) {
			t.Fatalf("decodeCall returned call=%v error=%v", call != nil, e != nil)
		}
		if e != nil {
			if e.status != http.StatusBadRequest || e.code != types.CodeBadRequest || e.message == "" {
				t.Fatalf("bad refusal %+v", e)
			}
			return
		}
		if !json.Valid(body) || checkDepth(body, DefaultMaxDepth) != nil {
			t.Fatalf("accepted invalid or too deep JSON: %q", body)
		}
		if call.Tool == "" || call.Usage.InputTokens < 0 || call.Usage.OutputTokens < 0 || len(call.CallID) > MaxCallIDBytes {
			t.Fatalf("accepted a bad call %+v", call)
		}
		if call.Args != nil && (call.Args[0] != '{' || !json.Valid(call.Args) || !bytes.Contains(body, call.Args)) {
			t.Fatalf("args %q not an object kept byte for byte", call.Args)
		}
		again, e := decodeCall(encodeCall(t, call), DefaultMaxDepth)
		if e != nil {
			t.Fatalf("re-encoded call refused: %s", e.message)
		}
		if again.Tool != call.Tool || again.CallID != call.CallID || again.Usage != call.Usage || !sameJSON(again.Args, call.Args) {
			t.Fatalf("round trip changed the call:\n%+v\n%+v", call, again)
		}
	})
}

func encodeCall(t *testing.T, c *types.Call) []byte {
	m := map[string]any{"tool": c.Tool, "call_id": c.CallID, "usage": c.Usage}
	if c.Args != nil {
		m["args"] = c.Args
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("encode %+v: %v", c, err)
	}
	return b
}

// sameJSON compares two JSON texts by their canonical form.
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	da, errA := jsontext.Decode(a)
	db, errB := jsontext.Decode(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(jsontext.Canonical(da), jsontext.Canonical(db))
}

// fuzzRefundYAML is the one tool FuzzValidateArgs judges arguments
// against: the refunds fixture's issue_refund with its permission and limit
// rule, and a nested address, a list and an enum added to its arguments.
var fuzzRefundYAML = refunds.Config("http://127.0.0.1:9001",
	refunds.Delete("tools.get_order", "tools.list_refunds", "tools.issue_refund.idempotency", "tools.issue_refund.owner",
		"tools.issue_refund.verify", "tools.issue_refund.state"),
	refunds.Add("tools.issue_refund.input_schema.properties", `
reason: {type: string, enum: [damaged, late, goodwill]}
address:
  type: object
  properties:
    city: {type: string, maxLength: 40}
    zip: {type: string, pattern: "^[0-9]{6}$"}
  additionalProperties: false
items:
  type: array
  maxItems: 5
  items: {type: object, required: [sku], properties: {sku: {type: string}, qty: {type: integer, minimum: 1}}}
`))

// FuzzValidateArgs judges arbitrary arguments against one fixed tool
// (fuzzRefundYAML; seeds in testdata/fuzz/FuzzValidateArgs)
// with validate.Compile and Check. It must never panic and must return
// exactly one result; a refusal has a code and a one-line message; an
// accepted call really meets the schema and the rule, and its canonical
// arguments are stable.
func FuzzValidateArgs(f *testing.F) {
	cfg, err := config.Parse([]byte(fuzzRefundYAML), "", nil)
	if err != nil {
		f.Fatal(err)
	}
	v, err := validate.Compile(cfg, nil)
	if err != nil {
		f.Fatal(err)
	}
	limit := big.NewInt(500000)
	principal := &types.Principal{ID: "cust_42", Permissions: []string{"refunds:write"},
		Limits: map[string]json.Number{"max_refund_paise": json.Number(limit.String())}}
	orderID := regexp.MustCompile(`^ORD-[0-9]+$`)
	valid := []string{"address", "amount_paise", "items", "order_id", "reason"}
	f.Fuzz(func(t *testing.T, args []byte) {
		c, r := v.Check(&validate.Input{Tool: "issue_refund", Args: args, Principal: principal,
			State: json.RawMessage(`{}`), RunID: "r1", CallID: "c1"})
		// A refusal by a rule comes with the checked call (approvals bind
		// to it); any other result is exactly one of the two.
		if c == nil && r == nil || c != nil && r != nil && r.Rule < 0 {
			t.Fatalf("Check returned checked=%v refusal=%v", c != nil, r != nil)
		}
		if r != nil && (r.Code == "" || r.Message == "" || strings.Contains(r.Message, "\n")) {
			t.Fatalf("bad refusal %+v", r)
		}
		if c == nil {
			return
		}
		got, err := jsontext.DecodeObject(c.Canonical)
		if err != nil {
			t.Fatalf("canonical %s does not decode: %v", c.Canonical, err)
		}
		if !bytes.Equal(jsontext.Canonical(got), c.Canonical) || c.ArgsHash != jsontext.Hash(c.Canonical) {
			t.Fatalf("canonical form not stable: %s", c.Canonical)
		}
		for k := range got {
			if !slices.Contains(valid, k) {
				t.Fatalf("accepted unknown argument %q: %s", k, c.Canonical)
			}
		}
		if id, ok := got["order_id"].(string); !ok || !orderID.MatchString(id) {
			t.Fatalf("accepted order_id %v", got["order_id"])
		}
		n, ok := got["amount_paise"].(json.Number)
		amount, isInt := new(big.Int).SetString(string(n), 10)
		if !ok || !isInt || amount.Sign() < 1 {
			t.Fatalf("accepted amount_paise %v (the canonical form must be a plain integer from 1)", got["amount_paise"])
		}
		if over := amount.Cmp(limit) > 0; over != (r != nil && r.Code == "over_limit") {
			t.Fatalf("amount %s against limit %s: refusal %+v", amount, limit, r)
		}
		if reason, ok := got["reason"]; ok && !slices.Contains([]any{"damaged", "late", "goodwill"}, reason) {
			t.Fatalf("accepted reason %v", reason)
		}
	})
}
