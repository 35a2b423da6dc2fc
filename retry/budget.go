package retry

import (
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
)

// BudgetWindow is how far back a Budget counts calls and retries.
const BudgetWindow = 10 * time.Second

// budgetBuckets is the number of one-second buckets in BudgetWindow.
const budgetBuckets = int(BudgetWindow / time.Second)

// Budget is one dependency's retry budget: a retry is allowed while the
// retries in the last BudgetWindow are fewer than
//
//	max(MinRetries, Ratio * calls in the window)
//
// Calls and retries are counted in one-second buckets, so the window slides
// a second at a time. A Budget is safe for concurrent use.
type Budget struct {
	ratio      float64
	minRetries int
	clk        clock.Clock

	mu      sync.Mutex
	buckets [budgetBuckets]budgetBucket
}

// budgetBucket counts one second's calls and retries.
type budgetBucket struct {
	second  int64 // Unix second the counts belong to
	calls   int
	retries int
}

// NewBudget returns a budget with the given settings; a zero Ratio means 0.2
// and a zero MinRetries means 3 (config.DefaultRetryBudgetRatio and
// config.DefaultRetryBudgetMin). A nil clock means the wall clock.
func NewBudget(b config.RetryBudget, clk clock.Clock) *Budget {
	if clk == nil {
		clk = clock.Real{}
	}
	budget := &Budget{clk: clk}
	budget.configure(b)
	return budget
}

// configure sets the ratio and the minimum, with defaults for zero values.
func (b *Budget) configure(cfg config.RetryBudget) {
	b.ratio = cfg.Ratio
	if b.ratio <= 0 {
		b.ratio = config.DefaultRetryBudgetRatio
	}
	b.minRetries = cfg.MinRetries
	if b.minRetries <= 0 {
		b.minRetries = config.DefaultRetryBudgetMin
	}
}

// RecordCall counts one call (not one attempt) against the dependency.
func (b *Budget) RecordCall() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.current().calls++
}

// TryRetry reports whether one more retry fits in the budget, and counts it
// when it does.
func (b *Budget) TryRetry() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clk.Now().Unix()
	calls, retries := 0, 0
	for _, bucket := range b.buckets {
		if bucket.second > now-int64(budgetBuckets) && bucket.second <= now {
			calls += bucket.calls
			retries += bucket.retries
		}
	}
	allowed := max(float64(b.minRetries), b.ratio*float64(calls))
	if float64(retries) >= allowed {
		return false
	}
	b.current().retries++
	return true
}

// current returns the bucket of the clock's current second, emptied if it
// last held an older second. b.mu must be held.
func (b *Budget) current() *budgetBucket {
	now := b.clk.Now().Unix()
	bucket := &b.buckets[int(((now%int64(budgetBuckets))+int64(budgetBuckets))%int64(budgetBuckets))]
	if bucket.second != now {
		*bucket = budgetBucket{second: now}
	}
	return bucket
}

// Budgets holds one Budget per dependency, created on first use. It is safe
// for concurrent use.
type Budgets struct {
	clk clock.Clock

	mu      sync.Mutex
	budgets map[string]*budgetEntry
}

// budgetEntry remembers the settings a Budget was configured with.
type budgetEntry struct {
	cfg    config.RetryBudget
	budget *Budget
}

// NewBudgets returns an empty set of budgets that read the given clock (nil
// means the wall clock).
func NewBudgets(clk clock.Clock) *Budgets {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Budgets{clk: clk, budgets: make(map[string]*budgetEntry)}
}

// Get returns the budget of dependency dep, creating it with cfg on first
// use. When cfg differs from the settings the budget has (a reloaded config),
// the new settings apply and the counts are kept.
func (s *Budgets) Get(dep string, cfg config.RetryBudget) *Budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	entry, ok := s.budgets[dep]
	if !ok {
		entry = &budgetEntry{cfg: cfg, budget: NewBudget(cfg, s.clk)}
		s.budgets[dep] = entry
		return entry.budget
	}
	if entry.cfg != cfg {
		entry.cfg = cfg
		entry.budget.mu.Lock()
		entry.budget.configure(cfg)
		entry.budget.mu.Unlock()
	}
	return entry.budget
}

// Forget drops the budget of dependency dep: its next Get starts a fresh
// one with no recent calls or retries counted.
func (s *Budgets) Forget(dep string) {
	s.mu.Lock()
	delete(s.budgets, dep)
	s.mu.Unlock()
}
