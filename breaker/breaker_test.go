package breaker

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one action against a breaker in a table test: advance the clock,
// then run one attempt with the given outcome (or only check the state).
type step struct {
	advance time.Duration
	// outcome of an attempt; when allowed is false the attempt must be
	// refused and outcome is not used.
	outcome Outcome
	allowed bool
	// checkOnly skips the attempt and only checks the state.
	checkOnly bool
	// state and failures expected after the step.
	state    State
	failures int
}

func TestBreakerTransitions(t *testing.T) {
	settings := Settings{Threshold: 3, Cooldown: 10 * time.Second}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "closed to open to half-open to closed",
			steps: []step{
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Failure, allowed: true, state: Open, failures: 3},
				{allowed: false, state: Open, failures: 3},
				{advance: 9 * time.Second, allowed: false, state: Open, failures: 3},
				{advance: time.Second, checkOnly: true, state: HalfOpen, failures: 3},
				{outcome: Success, allowed: true, state: Closed, failures: 0},
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
			},
		},
		{
			name: "probe failure opens again for another cooldown",
			steps: []step{
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Failure, allowed: true, state: Open, failures: 3},
				{advance: 10 * time.Second, outcome: Failure, allowed: true, state: Open, failures: 4},
				{advance: 9 * time.Second, allowed: false, state: Open, failures: 4},
				{advance: time.Second, outcome: Success, allowed: true, state: Closed, failures: 0},
			},
		},
		{
			name: "success in closed state resets the count",
			steps: []step{
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Success, allowed: true, state: Closed, failures: 0},
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Failure, allowed: true, state: Open, failures: 3},
			},
		},
		{
			name: "ignored outcomes do not count",
			steps: []step{
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Ignore, allowed: true, state: Closed, failures: 2},
				{outcome: Ignore, allowed: true, state: Closed, failures: 2},
				{outcome: Ignore, allowed: true, state: Closed, failures: 2},
				{outcome: Failure, allowed: true, state: Open, failures: 3},
			},
		},
		{
			name: "an ignored probe lets another probe through",
			steps: []step{
				{outcome: Failure, allowed: true, state: Closed, failures: 1},
				{outcome: Failure, allowed: true, state: Closed, failures: 2},
				{outcome: Failure, allowed: true, state: Open, failures: 3},
				{advance: 10 * time.Second, outcome: Ignore, allowed: true, state: HalfOpen, failures: 3},
				{outcome: Success, allowed: true, state: Closed, failures: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			s := settings
			s.Clock = clk
			b := New("payments", s)
			for i, st := range tt.steps {
				clk.Advance(st.advance)
				if !st.checkOnly {
					ticket, err := b.Allow()
					if st.allowed != (err == nil) {
						t.Fatalf("step %d: Allow error = %v, want allowed = %v", i, err, st.allowed)
					}
					if err == nil {
						b.Done(ticket, st.outcome)
					}
				}
				snap := b.Snapshot()
				if snap.State != st.state || snap.ConsecutiveFailures != st.failures {
					t.Fatalf("step %d: state %v with %d failures, want %v with %d",
						i, snap.State, snap.ConsecutiveFailures, st.state, st.failures)
				}
				if got := b.State(); got != st.state {
					t.Fatalf("step %d: State() = %v, want %v", i, got, st.state)
				}
			}
		})
	}
}

func TestOpenError(t *testing.T) {
	clk := clock.NewFake(epoch)
	b := New("payments", Settings{Clock: clk}) // defaults: 5 failures, 60s
	for range 5 {
		ticket, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		b.Done(ticket, Failure)
	}
	clk.Advance(17*time.Second + 500*time.Millisecond)

	_, err := b.Allow()
	var open *OpenError
	if !errors.As(err, &open) {
		t.Fatalf("Allow error = %v, want *OpenError", err)
	}
	want := OpenError{Dependency: "payments", Failures: 5, RetryIn: 42*time.Second + 500*time.Millisecond}
	if *open != want {
		t.Errorf("OpenError = %+v, want %+v", *open, want)
	}
	if got, want := err.Error(), "payments failed 5 times in a row; circuit open, next try allowed in 43s"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	snap := b.Snapshot()
	wantSnap := Snapshot{Name: "payments", State: Open, ConsecutiveFailures: 5, OpenedAt: epoch, RetryIn: open.RetryIn}
	if snap != wantSnap {
		t.Errorf("Snapshot = %+v, want %+v", snap, wantSnap)
	}
}

func TestOneProbeOnly(t *testing.T) {
	clk := clock.NewFake(epoch)
	b := New("payments", Settings{Threshold: 1, Cooldown: time.Second, Clock: clk})
	ticket, _ := b.Allow()
	b.Done(ticket, Failure)
	clk.Advance(time.Second)

	const callers = 50
	var wg sync.WaitGroup
	start := make(chan struct{})
	tickets := make(chan Ticket, callers)
	refusals := make(chan *OpenError, callers)
	for range callers {
		wg.Go(func() {
			<-start
			ticket, err := b.Allow()
			if err != nil {
				var open *OpenError
				if errors.As(err, &open) {
					refusals <- open
				}
				return
			}
			tickets <- ticket
		})
	}
	close(start)
	wg.Wait()
	close(tickets)
	close(refusals)

	if len(tickets) != 1 || len(refusals) != callers-1 {
		t.Fatalf("%d probes allowed and %d refused, want 1 and %d", len(tickets), len(refusals), callers-1)
	}
	for open := range refusals {
		if !open.ProbeInFlight || open.RetryIn != 0 {
			t.Fatalf("refusal = %+v, want a probe in flight", open)
		}
		want := "payments failed 1 time in a row; circuit half-open, a probe is in flight, next try allowed when it finishes"
		if got := open.Error(); got != want {
			t.Fatalf("Error() = %q, want %q", got, want)
		}
	}
	b.Done(<-tickets, Success)
	if got := b.State(); got != Closed {
		t.Fatalf("State after probe success = %v, want closed", got)
	}
}

func TestLateDoneFromOldGenerationIgnored(t *testing.T) {
	tests := []struct {
		name      string
		late      Outcome
		wantState State
		wantFails int
	}{
		// Two attempts start while closed; the first failure opens the
		// breaker; the second's late result must not change anything.
		{"late success does not close an open breaker", Success, Open, 1},
		{"late failure does not add to the count", Failure, Open, 1},
		{"late ignore is a no-op", Ignore, Open, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			b := New("payments", Settings{Threshold: 1, Cooldown: time.Minute, Clock: clk})
			first, _ := b.Allow()
			slow, _ := b.Allow()
			b.Done(first, Failure)
			b.Done(slow, tt.late)
			snap := b.Snapshot()
			if snap.State != tt.wantState || snap.ConsecutiveFailures != tt.wantFails {
				t.Fatalf("state %v with %d failures, want %v with %d", snap.State, snap.ConsecutiveFailures, tt.wantState, tt.wantFails)
			}
		})
	}

	t.Run("late result after half-open does not consume the probe", func(t *testing.T) {
		clk := clock.NewFake(epoch)
		b := New("payments", Settings{Threshold: 1, Cooldown: time.Minute, Clock: clk})
		first, _ := b.Allow()
		slow, _ := b.Allow()
		b.Done(first, Failure)
		clk.Advance(time.Minute)
		probe, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		b.Done(slow, Success) // from the closed generation: ignored
		if got := b.State(); got != HalfOpen {
			t.Fatalf("State = %v after a late success, want half_open", got)
		}
		b.Done(probe, Failure)
		if got := b.State(); got != Open {
			t.Fatalf("State = %v after probe failure, want open", got)
		}
	})

	t.Run("zero ticket is ignored", func(t *testing.T) {
		b := New("payments", Settings{Threshold: 1, Clock: clock.NewFake(epoch)})
		b.Done(Ticket{}, Failure)
		if got := b.State(); got != Closed {
			t.Fatalf("State = %v, want closed", got)
		}
	})
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Closed.String(), "closed"},
		{Open.String(), "open"},
		{HalfOpen.String(), "half_open"},
		{State(9).String(), "unknown"},
		{Success.String(), "success"},
		{Failure.String(), "failure"},
		{Ignore.String(), "ignore"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	clk := clock.NewFake(epoch)
	s := NewSet(clk)
	cfg := Settings{Threshold: 2, Cooldown: 30 * time.Second}
	payments := s.Get("payments", cfg)
	if s.Get("payments", cfg) != payments {
		t.Fatal("Get made a second breaker for the same dependency")
	}
	orders := s.Get("orders", Settings{})
	for range 2 {
		ticket, _ := payments.Allow()
		payments.Done(ticket, Failure)
	}
	clk.Advance(10 * time.Second)

	want := []Snapshot{
		{Name: "orders", State: Closed},
		{Name: "payments", State: Open, ConsecutiveFailures: 2, OpenedAt: epoch, RetryIn: 20 * time.Second},
	}
	got := s.Snapshots()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Snapshots = %+v, want %+v", got, want)
	}

	// A reloaded config applies to the same breaker, state kept.
	if s.Get("payments", Settings{Threshold: 2, Cooldown: 10 * time.Second}) != payments {
		t.Fatal("new settings replaced the breaker")
	}
	if got := payments.State(); got != HalfOpen {
		t.Fatalf("State with a 10s cooldown after 10s = %v, want half_open", got)
	}
	if orders.State() != Closed {
		t.Fatal("orders changed")
	}
}

func ExampleBreaker() {
	clk := clock.NewFake(epoch)
	b := New("payments", Settings{Threshold: 2, Cooldown: time.Minute, Clock: clk})
	for range 2 {
		ticket, _ := b.Allow()
		b.Done(ticket, Failure)
	}
	clk.Advance(18 * time.Second)
	_, err := b.Allow()
	fmt.Println(err)
	fmt.Println(b.State())
	// Output:
	// payments failed 2 times in a row; circuit open, next try allowed in 42s
	// open
}
