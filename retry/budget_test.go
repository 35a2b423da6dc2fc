package retry

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
)

func TestBudget(t *testing.T) {
	type step struct {
		advance time.Duration
		calls   int  // RecordCall this many times first
		retry   bool // then TryRetry, expecting this answer
	}
	tests := []struct {
		name  string
		cfg   config.RetryBudget
		steps []step
	}{
		{
			name: "minimum retries with no calls",
			steps: []step{
				{retry: true}, {retry: true}, {retry: true}, {retry: false},
			},
		},
		{
			name: "ratio of calls beyond the minimum",
			steps: []step{
				// 20 calls allow 0.2*20 = 4 retries.
				{calls: 20, retry: true}, {retry: true}, {retry: true}, {retry: true}, {retry: false},
				// 5 more calls: 0.2*25 = 5.
				{calls: 5, retry: true}, {retry: false},
			},
		},
		{
			name: "retries age out of the window",
			steps: []step{
				{retry: true}, {retry: true}, {retry: true}, {retry: false},
				{advance: 9 * time.Second, retry: false},
				{advance: time.Second, retry: true},
			},
		},
		{
			name: "calls age out of the window",
			steps: []step{
				{calls: 50, retry: true},
				// 50 calls allow 10 retries; one is taken.
				{advance: 5 * time.Second, retry: true}, {retry: true}, {retry: true},
				{retry: true}, {retry: true}, {retry: true}, {retry: true},
				{retry: true}, {retry: true}, {retry: false},
				// The 50 calls and the first retry leave the window; 9 retries
				// remain, above the minimum of 3.
				{advance: 5 * time.Second, retry: false},
				// The other retries leave too.
				{advance: 5 * time.Second, retry: true},
			},
		},
		{
			name: "configured ratio and minimum",
			cfg:  config.RetryBudget{Ratio: 0.5, MinRetries: 1},
			steps: []step{
				{retry: true}, {retry: false},
				{calls: 4, retry: true}, {retry: false},
			},
		},
		{
			name: "a long silence empties every bucket",
			steps: []step{
				{retry: true}, {retry: true}, {retry: true}, {retry: false},
				{advance: time.Hour, retry: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			b := NewBudget(tt.cfg, clk)
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				for range s.calls {
					b.RecordCall()
				}
				if got := b.TryRetry(); got != s.retry {
					t.Fatalf("step %d: TryRetry = %v, want %v", i, got, s.retry)
				}
			}
		})
	}
}

func TestBudgetsGet(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewBudgets(clk)
	a := s.Get("payments", config.RetryBudget{MinRetries: 1})
	if s.Get("payments", config.RetryBudget{MinRetries: 1}) != a {
		t.Fatal("Get returned a new budget for the same dependency")
	}
	if s.Get("orders", config.RetryBudget{}) == a {
		t.Fatal("two dependencies share a budget")
	}
	if !a.TryRetry() || a.TryRetry() {
		t.Fatal("MinRetries 1 should allow exactly one retry")
	}
	// A reloaded config applies to the same budget, counts kept.
	if s.Get("payments", config.RetryBudget{MinRetries: 2}) != a {
		t.Fatal("new settings replaced the budget")
	}
	if !a.TryRetry() || a.TryRetry() {
		t.Fatal("MinRetries 2 with one retry counted should allow exactly one more")
	}
}

func TestBudgetConcurrent(t *testing.T) {
	b := NewBudget(config.RetryBudget{MinRetries: 10}, clock.NewFake(time.Unix(0, 0)))
	allowed := make(chan bool, 100)
	done := make(chan struct{})
	for range 100 {
		go func() {
			b.RecordCall()
			allowed <- b.TryRetry()
			done <- struct{}{}
		}()
	}
	for range 100 {
		<-done
	}
	close(allowed)
	n := 0
	for ok := range allowed {
		if ok {
			n++
		}
	}
	// 100 calls allow max(10, 0.2*calls seen so far) retries; at least 10
	// and never more than 20.
	if n < 10 || n > 20 {
		t.Errorf("%d retries allowed, want between 10 and 20", n)
	}
}
