package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// A repeat that re-sends an operation of unknown outcome under its key,
// and whose re-send never reaches the provider (connection refused), must
// leave the operation unknown: the first attempt may have acted. Before
// the fix the repeat answered connect_failed with side_effect none and
// deleted the operation, so the refund the first attempt made was known to
// no ledger (found by the dependency fault scenario, docs/reliability.md).
func TestResendNotDeliveredKeepsOperationUnknown(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, setupOpts{honourKeys: true,
		mutate: func(cfg *config.Config) {
			tool := cfg.Tools["issue_refund"]
			tool.Idempotency.Header = "Idempotency-Key"
			tool.Verify, tool.Owner = nil, nil
			tool.Timeout = config.Timeout{Connect: config.Duration(time.Second), Read: config.Duration(200 * time.Millisecond)}
			tool.Retry.MaxAttempts = 1
		},
		handler: func(p *sim.Payments) http.Handler { return p }})
	t.Cleanup(func() { close(release) })
	b.payments.Hold = func(int) <-chan struct{} { return release } // the refund is made after the read timeout

	first := b.call("issue_refund", refundArgs(1000))
	if first.Code() != types.CodeTimeoutUnknownOutcome {
		t.Fatalf("first call: %s, want timeout_unknown_outcome: %s", first.Code(), first.Observation)
	}
	b.srv.Listener.Close() // the provider refuses connections from now on

	repeat := b.call("issue_refund", refundArgs(1000))
	if repeat.Code() != types.CodeUnknownOutcome || repeat.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("repeat whose re-send was refused: %s side_effect %s, want unknown_outcome, unknown: %s",
			repeat.Code(), repeat.Meta.SideEffect, repeat.Observation)
	}
	again := b.call("issue_refund", refundArgs(1000))
	if again.Code() != types.CodeUnknownOutcome {
		t.Fatalf("a later repeat: %s, want unknown_outcome (the operation kept): %s", again.Code(), again.Observation)
	}
}
