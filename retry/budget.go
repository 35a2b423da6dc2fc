package retry

import "sync"

// The defaults of a BudgetSettings' zero fields.
const (
	// DefaultBudgetRatio is BudgetSettings.Ratio when zero.
	DefaultBudgetRatio = 0.2
	// DefaultBudgetMinRetries is BudgetSettings.MinRetries when zero.
	DefaultBudgetMinRetries = 3
)

// BudgetSettings configures a Budget (the pipeline converts a dependency's
// retry_budget keys into it). Every zero field means its default.
type BudgetSettings struct {
	// Ratio is the share of the active calls that may be retrying at once.
	// Default 0.2 (DefaultBudgetRatio).
	Ratio float64
	// MinRetries is how many retries may be in flight whatever the ratio
	// allows. Default 3 (DefaultBudgetMinRetries).
	MinRetries int
}

// Budget is one dependency's retry budget. It bounds the retries in flight
// at one time, not the retries over a window: a retry is allowed while the
// retries in flight are fewer than
//
//	max(MinRetries, floor(Ratio * active calls))
//
// where the active calls are the calls to the dependency that have begun and
// not ended (each counts from Begin until its end func runs) and a retry is
// in flight from the TryRetry that granted it until its release func runs
// (its backoff and its attempt). A caller alone on a dependency therefore
// always gets its configured attempts (it never has more than one retry in
// flight, and MinRetries is at least 1); only many callers retrying at once
// are held to the ratio. This is the shape of Envoy's retry_budget
// (budget_percent, min_retry_concurrency).
//
// The budget reads no clock: its only inputs are the Begin, TryRetry and
// release calls. A Budget is safe for concurrent use.
type Budget struct {
	mu         sync.Mutex
	ratio      float64
	minRetries int
	active     int // calls begun and not ended
	retrying   int // retries granted and not released
}

// NewBudget returns a budget with the given settings; a zero Ratio means 0.2
// and a zero MinRetries means 3 (DefaultBudgetRatio and
// DefaultBudgetMinRetries).
func NewBudget(b BudgetSettings) *Budget {
	budget := &Budget{}
	budget.configure(b)
	return budget
}

// configure sets the ratio and the minimum, with defaults for zero values.
// b.mu must be held, or b not yet shared.
func (b *Budget) configure(cfg BudgetSettings) {
	b.ratio = cfg.Ratio
	if b.ratio <= 0 {
		b.ratio = DefaultBudgetRatio
	}
	b.minRetries = cfg.MinRetries
	if b.minRetries <= 0 {
		b.minRetries = DefaultBudgetMinRetries
	}
}

// Begin counts one call (not one attempt) as active against the dependency
// until the returned end func is called. Calling end more than once counts
// once.
func (b *Budget) Begin() (end func()) {
	b.Enter()
	return b.once(func() { b.active-- })
}

// Enter counts one call as active against the dependency, like Begin, until
// the caller calls Leave, exactly once. The pair allocates nothing (Begin's
// end func costs three allocations): it is for a caller that ends the call
// in one deferred place, as the pipeline does on every call.
func (b *Budget) Enter() {
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
}

// Leave ends one call counted by Enter. Calling it more often than Enter
// is a bug in the caller.
func (b *Budget) Leave() {
	b.mu.Lock()
	b.active--
	b.mu.Unlock()
}

// TryRetry reports whether one more retry fits in the budget now. When it
// does, the retry counts as in flight until release is called (once the
// retry's attempt has ended, or the caller gave it up); calling release more
// than once counts once. When it does not, release is a no-op.
func (b *Budget) TryRetry() (release func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retrying >= b.allowed() {
		return func() {}, false
	}
	b.retrying++
	return b.once(func() { b.retrying-- }), true
}

// allowed is how many retries may be in flight at once. b.mu must be held.
func (b *Budget) allowed() int {
	return max(b.minRetries, int(b.ratio*float64(b.active)))
}

// InFlight reports the active calls and the retries in flight: for tests and
// diagnostics.
func (b *Budget) InFlight() (active, retrying int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.active, b.retrying
}

// once wraps a count change in the budget's lock and makes it run at most
// once.
func (b *Budget) once(change func()) func() {
	var o sync.Once
	return func() {
		o.Do(func() {
			b.mu.Lock()
			change()
			b.mu.Unlock()
		})
	}
}

// Budgets holds one Budget per dependency, created on first use. It is safe
// for concurrent use.
type Budgets struct {
	mu      sync.Mutex
	budgets map[string]*budgetEntry
}

// budgetEntry remembers the settings a Budget was configured with.
type budgetEntry struct {
	cfg    BudgetSettings
	budget *Budget
}

// NewBudgets returns an empty set of budgets.
func NewBudgets() *Budgets {
	return &Budgets{budgets: make(map[string]*budgetEntry)}
}

// Get returns the budget of dependency dep, creating it with cfg on first
// use. When cfg differs from the settings the budget has (a reloaded config),
// the new settings apply and the calls and retries in flight are kept.
func (s *Budgets) Get(dep string, cfg BudgetSettings) *Budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	entry, ok := s.budgets[dep]
	if !ok {
		entry = &budgetEntry{cfg: cfg, budget: NewBudget(cfg)}
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
