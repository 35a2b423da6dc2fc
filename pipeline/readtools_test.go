package pipeline_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// A write whose answer is lost and that has no verify read: the model is
// told plainly not to retry it and to verify with a read first, and the
// read tools that take the same arguments are named; reads of another
// dependency, reads the principal may not call and reads that need an
// argument the write does not have are not.
func TestUnknownOutcomeNamesTheReadTools(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, setupOpts{speed: 50, mutate: func(cfg *config.Config) {
		cfg.Tools["issue_refund"].Verify = nil
		orderArgs := map[string]any{"type": "object", "required": []any{"order_id"},
			"properties": map[string]any{"order_id": map[string]any{"type": "string"}}}
		read := func(dep, perm string, schema map[string]any) *config.Tool {
			return &config.Tool{Description: "A read.", Dependency: dep, Effect: types.EffectRead, Permission: perm,
				Request: &config.Request{Method: "GET", Path: "/orders/{order_id}"}, InputSchema: schema}
		}
		cfg.Dependencies["ledger"] = &config.Dependency{BaseURL: cfg.Dependencies["payments"].BaseURL}
		cfg.Tools["ledger_entry"] = read("ledger", "", orderArgs)
		cfg.Tools["audit_order"] = read("payments", "audit:read", orderArgs)
		cfg.Tools["get_customer"] = read("payments", "", map[string]any{"type": "object", "required": []any{"customer_id"},
			"properties": map[string]any{"customer_id": map[string]any{"type": "string"}}})
		cfg.Tools["get_customer"].Request.Path = "/customers/{customer_id}"
	}})
	b.payments.Hold = func(int) <-chan struct{} { return release }
	res := b.call("issue_refund", refundArgs(1000))
	close(release)
	if res.Code() != types.CodeTimeoutUnknownOutcome || res.Meta.Next != types.NextVerify {
		t.Fatalf("got %s next=%s: %s", res.Code(), res.Meta.Next, res.Observation)
	}
	for _, want := range []string{"MAY have been carried out", "Do not retry this write", "Verify with a read first",
		"get_order and list_refunds take the same arguments", "escalate to a person"} {
		if !strings.Contains(res.Observation, want) {
			t.Errorf("observation lacks %q: %s", want, res.Observation)
		}
	}
	for _, never := range []string{"ledger_entry", "audit_order", "get_customer", "repeating this exact call is safe"} {
		if strings.Contains(res.Observation, never) {
			t.Errorf("observation says %q: %s", never, res.Observation)
		}
	}
}
