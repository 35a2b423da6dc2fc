package pipeline_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// Concurrent repeats of an operation whose outcome is unknown settle it
// once: one claims it and verifies, the others wait and replay its
// outcome. Before the claim, every repeat verified, found the refund and
// settled the operation again, adding its state update once per repeat.
func TestConcurrentRepeatsOfUnknownVerifyOnce(t *testing.T) {
	const repeats = 8
	release := make(chan struct{})
	b := setup(t, setupOpts{speed: 10, handler: func(p *sim.Payments) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/refunds") {
				time.Sleep(50 * time.Millisecond) // a slow read: the repeats overlap
			}
			p.ServeHTTP(w, r)
		})
	}})
	b.payments.Hold = func(n int) <-chan struct{} {
		if n == 0 {
			return release
		}
		return nil
	}
	first := b.call("issue_refund", refundArgs(1000))
	if first.Code() != types.CodeUnknownOutcome {
		t.Fatalf("first call: %s: %s", first.Code(), first.Observation)
	}
	close(release)
	waitFor(t, func() bool { return b.payments.Counts().Refunds == 1 })

	results := make([]*types.Result, repeats)
	var wg sync.WaitGroup
	for i := range repeats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = b.call("issue_refund", refundArgs(1000))
		}()
	}
	wg.Wait()
	settled := 0
	for _, res := range results {
		if !res.OK || !res.Meta.Verified {
			t.Fatalf("repeat: %s verified=%v: %s", res.Code(), res.Meta.Verified, res.Observation)
		}
		if !res.Meta.Replayed {
			settled++
		}
	}
	if settled != 1 {
		t.Errorf("%d repeats settled the operation, want 1 (the others replay it)", settled)
	}
	run, err := b.gw.Store().GetRun(t.Context(), b.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Refunded json.Number `json:"refunded_paise"`
	}
	if err := json.Unmarshal(run.State, &st); err != nil || st.Refunded != "1000" {
		t.Fatalf("state %s, want refunded_paise 1000 once", run.State)
	}
	if c := b.payments.Counts(); c.Requests != 1 || c.Refunds != 1 {
		t.Fatalf("provider: %+v, want one request and one refund", c)
	}
}
