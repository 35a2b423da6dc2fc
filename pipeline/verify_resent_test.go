package pipeline_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/types"
)

// lockedBuffer is a log destination safe for the pipeline's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// claimKeysWithVerify is refundsConfig's refund tool as a config that says the
// provider honours Idempotency-Key, with a verify read, and a read timeout
// of 1 s (held requests time out in real time).
func claimKeysWithVerify(cfg *config.Config) {
	t := cfg.Tools["issue_refund"]
	t.Idempotency.Header = "Idempotency-Key"
	t.Timeout = config.Timeout{Connect: config.Duration(time.Second), Read: config.Duration(time.Second)}
	t.Verify = &config.Lookup{Lookup: "list_refunds", Args: map[string]string{"order_id": "args.order_id"},
		Found:  "result.refunds.exists(r, r.amount_paise == args.amount_paise)",
		Result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"}
}

// A config that claims the provider honours the key, against the real
// simulated provider honouring it or not. Not honouring it, the refund
// incident happens (three refunds: the claim is wrong, toolgate cannot
// undo it), but toolgate no longer reports it as a plain success: the
// verify read shows the first refund where the answer is the third, so the
// call says it may have been done twice, advises escalate, and logs a
// warning. Honouring it, the re-send answers the first refund: one refund,
// no warning.
func TestResentWriteCheckedByVerify(t *testing.T) {
	cases := []struct {
		name         string
		honour       bool
		held         int // the first requests, held until the last arrives
		attempts     int
		refunds      int
		next         types.Next
		warned       bool
		observations []string
	}{
		{name: "claimed but not honoured", honour: false, held: 2, attempts: 3, refunds: 3, next: types.NextEscalate, warned: true,
			observations: []string{"may have been done twice", `"refund_id":"RF-99203"`, "escalate"}},
		{name: "honoured", honour: true, held: 1, attempts: 2, refunds: 1, next: types.NextContinue, warned: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &lockedBuffer{}
			release := make(chan struct{})
			finished := make(chan struct{}, 8)
			var mu sync.Mutex
			arrived := 0
			b := setup(t, setupOpts{honourKeys: c.honour, mutate: claimKeysWithVerify,
				logger: slog.New(slog.NewTextHandler(logs, nil)),
				handler: func(p *sim.Payments) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.Method != http.MethodPost {
							p.ServeHTTP(w, r)
							return
						}
						mu.Lock()
						arrived++
						if arrived == c.held+1 {
							close(release) // the held requests go on now
						}
						mu.Unlock()
						p.ServeHTTP(w, r)
						finished <- struct{}{}
					})
				}})
			b.payments.Hold = func(n int) <-chan struct{} {
				if n < c.held {
					return release
				}
				// The last request's refund is made after the held ones,
				// as with a slow provider (9 s, 7 s, then 2.7 s).
				after := make(chan struct{})
				go func() {
					for range c.held {
						<-finished
					}
					close(after)
				}()
				return after
			}
			res := b.call("issue_refund", refundArgs(425000))
			if !res.OK || res.Meta.Attempts != c.attempts || res.Meta.SideEffect != types.SideEffectCommitted {
				t.Fatalf("want ok after %d attempts, got ok=%v attempts=%d side_effect=%s: %s", c.attempts, res.OK, res.Meta.Attempts, res.Meta.SideEffect, res.Observation)
			}
			if res.Meta.Next != c.next {
				t.Errorf("next = %s, want %s: %s", res.Meta.Next, c.next, res.Observation)
			}
			for _, want := range c.observations {
				if !strings.Contains(res.Observation, want) {
					t.Errorf("observation lacks %q: %s", want, res.Observation)
				}
			}
			if got := b.payments.Counts().Refunds; got != c.refunds {
				t.Errorf("the provider made %d refunds, want %d", got, c.refunds)
			}
			warned := strings.Contains(logs.String(), "level=WARN")
			if warned != c.warned || c.warned && !strings.Contains(logs.String(), "differs from its verify read") {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, c.warned, logs.String())
			}
		})
	}
}
