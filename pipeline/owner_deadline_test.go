package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// TestOwnerLookupBoundedByTotal: an ownership lookup that never answers
// (a Go tool that waits for its context) ends at the call's total timeout
// with a clear refusal, and the write is never sent.
func TestOwnerLookupBoundedByTotal(t *testing.T) {
	release := make(chan struct{}) // only the guard below closes it
	var lookups atomic.Int32
	b := setup(t, setupOpts{mutate: func(cfg *config.Config) {
		get := cfg.Tools["get_order"]
		get.Dependency, get.Request = "", nil
		get.Func = func(ctx context.Context, _ json.RawMessage) (any, error) {
			lookups.Add(1)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return map[string]any{"customer_id": "cust_42"}, nil
			}
		}
		cfg.Tools["issue_refund"].Timeout.Total = config.Duration(50 * time.Millisecond)
	}})

	done := make(chan *types.Result, 1)
	go func() { done <- b.call("issue_refund", refundArgs(100)) }()
	var res *types.Result
	select {
	case res = <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		close(release)
		<-done
		t.Fatal("the ownership lookup was not bounded by the call's total timeout")
	}
	if res.OK || res.Code() != types.CodeTimeout {
		t.Fatalf("result = %+v, want a timeout refusal", res)
	}
	if msg := res.Error.Message; !strings.Contains(msg, "ownership check with get_order") || !strings.Contains(msg, "Nothing was done") {
		t.Errorf("message = %q, want it to name the ownership check and say nothing was done", msg)
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("lookups = %d, want 1 (no retry past the deadline)", n)
	}
	if c := b.payments.Counts(); c.Refunds != 0 || c.Requests != 0 {
		t.Errorf("provider counts = %+v, want nothing sent", c)
	}
}
