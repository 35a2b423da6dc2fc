package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
)

// BenchmarkFailsafeReference is the reference for pipeline.BenchmarkCall:
// the same no-op Go function, called with the same arguments built the
// same way, wrapped in failsafe-go's retry policy, circuit breaker and
// timeout with toolgate's defaults (4 attempts, backoff 1s to 30s with
// jitter; breaker threshold 5, delay 60s; timeout 10s), composed in
// toolgate's order: retry outside the breaker outside the attempt's
// timeout. It is what resilience alone costs, without validation, ledger,
// envelope, observation or record.
func BenchmarkFailsafeReference(b *testing.B) {
	noop := func(ctx context.Context, args json.RawMessage) (any, error) { return json.RawMessage(`{"ok":1}`), nil }
	retry := retrypolicy.NewBuilder[any]().WithMaxAttempts(4).WithBackoff(time.Second, 30*time.Second).WithJitterFactor(0.5).Build()
	breaker := circuitbreaker.NewBuilder[any]().WithFailureThreshold(5).WithDelay(60 * time.Second).Build()
	limit := timeout.New[any](10 * time.Second)
	exec := failsafe.With[any](retry, breaker, limit)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		args := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		res, err := exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[any]) (any, error) {
			return noop(e.Context(), args)
		})
		if err != nil || res == nil {
			b.Fatal(err, res)
		}
		i++
	}
}
