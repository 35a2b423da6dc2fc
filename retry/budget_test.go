package retry

import (
	"sync"
	"testing"
)

// budgetOp is one step of a budget table test.
type budgetOp int

const (
	opBegin   budgetOp = iota // a call begins
	opEnd                     // the oldest active call ends
	opRetry                   // TryRetry, expecting the row's answer
	opRelease                 // the oldest granted retry ends
)

func TestBudget(t *testing.T) {
	type step struct {
		op    budgetOp
		n     int  // how many times (default 1)
		retry bool // opRetry: the expected answer
	}
	tests := []struct {
		name  string
		cfg   BudgetSettings
		steps []step
	}{
		{
			name: "a lone caller retries one at a time without end",
			steps: []step{
				{op: opBegin},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opEnd},
				// The next call of the same caller starts with the full budget.
				{op: opBegin},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
				{op: opRetry, retry: true}, {op: opRelease},
			},
		},
		{
			name: "minimum retries at a time with few calls",
			steps: []step{
				{op: opBegin, n: 5},
				{op: opRetry, n: 3, retry: true}, {op: opRetry, retry: false},
				// One retry ends: one more fits.
				{op: opRelease}, {op: opRetry, retry: true}, {op: opRetry, retry: false},
			},
		},
		{
			name: "ratio of active calls beyond the minimum",
			steps: []step{
				// 20 active calls allow 0.2*20 = 4 retries at once.
				{op: opBegin, n: 20},
				{op: opRetry, n: 4, retry: true}, {op: opRetry, retry: false},
				// 5 more calls: 0.2*25 = 5.
				{op: opBegin, n: 5}, {op: opRetry, retry: true}, {op: opRetry, retry: false},
				// 15 calls end: 0.2*10 = 2, below the minimum of 3; the five
				// retries in flight stay, none more.
				{op: opEnd, n: 15}, {op: opRetry, retry: false},
				{op: opRelease, n: 2}, {op: opRetry, retry: false},
				{op: opRelease}, {op: opRetry, retry: true},
			},
		},
		{
			name: "configured ratio and minimum",
			cfg:  BudgetSettings{Ratio: 0.5, MinRetries: 1},
			steps: []step{
				{op: opBegin}, {op: opRetry, retry: true}, {op: opRetry, retry: false},
				{op: opBegin, n: 3}, {op: opRetry, retry: true}, {op: opRetry, retry: false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.cfg)
			var ends, releases []func()
			for i, s := range tt.steps {
				for range max(s.n, 1) {
					switch s.op {
					case opBegin:
						ends = append(ends, b.Begin())
					case opEnd:
						ends[0]()
						ends = ends[1:]
					case opRetry:
						release, ok := b.TryRetry()
						if ok != s.retry {
							active, retrying := b.InFlight()
							t.Fatalf("step %d: TryRetry = %v, want %v (active %d, retrying %d)", i, ok, s.retry, active, retrying)
						}
						if ok {
							releases = append(releases, release)
						}
					case opRelease:
						releases[0]()
						releases = releases[1:]
					}
				}
			}
		})
	}
}

// A release or an end called twice counts once, and a refused retry's
// release changes nothing.
func TestBudgetReleaseOnce(t *testing.T) {
	b := NewBudget(BudgetSettings{MinRetries: 1})
	end := b.Begin()
	release, ok := b.TryRetry()
	if !ok {
		t.Fatal("first retry refused")
	}
	refused, ok := b.TryRetry()
	if ok {
		t.Fatal("second retry at once allowed with MinRetries 1")
	}
	refused()
	release()
	release()
	end()
	end()
	if active, retrying := b.InFlight(); active != 0 || retrying != 0 {
		t.Fatalf("after every release: active %d, retrying %d, want 0 and 0", active, retrying)
	}
}

// Enter counts a call as active like Begin (the ratio grows with it) and
// Leave ends it.
func TestBudgetEnterLeave(t *testing.T) {
	b := NewBudget(BudgetSettings{Ratio: 0.5, MinRetries: 1})
	for range 4 {
		b.Enter()
	}
	for i, want := range []bool{true, true, false} {
		if _, ok := b.TryRetry(); ok != want {
			t.Fatalf("retry %d with 4 entered calls at ratio 0.5: allowed %v, want %v", i, ok, want)
		}
	}
	for range 4 {
		b.Leave()
	}
	if active, _ := b.InFlight(); active != 0 {
		t.Fatalf("after 4 Leave: active %d, want 0", active)
	}
}

func TestBudgetsGet(t *testing.T) {
	s := NewBudgets()
	a := s.Get("payments", BudgetSettings{MinRetries: 1})
	if s.Get("payments", BudgetSettings{MinRetries: 1}) != a {
		t.Fatal("Get returned a new budget for the same dependency")
	}
	if s.Get("orders", BudgetSettings{}) == a {
		t.Fatal("two dependencies share a budget")
	}
	if _, ok := a.TryRetry(); !ok {
		t.Fatal("MinRetries 1 should allow one retry")
	}
	if _, ok := a.TryRetry(); ok {
		t.Fatal("MinRetries 1 should allow only one retry at a time")
	}
	// A reloaded config applies to the same budget, retries in flight kept.
	if s.Get("payments", BudgetSettings{MinRetries: 2}) != a {
		t.Fatal("new settings replaced the budget")
	}
	if _, ok := a.TryRetry(); !ok {
		t.Fatal("MinRetries 2 with one retry in flight should allow one more")
	}
	if _, ok := a.TryRetry(); ok {
		t.Fatal("MinRetries 2 with two retries in flight should allow none")
	}
}

// Many goroutines retrying at once never hold more retries in flight than
// the budget allows for the calls active then.
func TestBudgetConcurrent(t *testing.T) {
	b := NewBudget(BudgetSettings{Ratio: 0.1, MinRetries: 2})
	const callers = 100
	ends := make([]func(), callers)
	for i := range ends {
		ends[i] = b.Begin()
	}
	var mu sync.Mutex
	granted, peak := 0, 0
	var releases []func()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			release, ok := b.TryRetry()
			if !ok {
				return
			}
			mu.Lock()
			granted++
			releases = append(releases, release)
			_, retrying := b.InFlight()
			peak = max(peak, retrying)
			mu.Unlock()
		})
	}
	wg.Wait()
	// 100 active calls allow 0.1*100 = 10 retries at once, none released.
	if granted != 10 || peak > 10 {
		t.Errorf("granted %d retries (peak %d in flight), want exactly 10", granted, peak)
	}
	for _, r := range releases {
		r()
	}
	for _, end := range ends {
		end()
	}
	if active, retrying := b.InFlight(); active != 0 || retrying != 0 {
		t.Errorf("after the end: active %d, retrying %d", active, retrying)
	}
}
