package breaker

import (
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/clock"
)

// The defaults of a Settings' zero fields.
const (
	// DefaultThreshold is Settings.Threshold when zero.
	DefaultThreshold = 5
	// DefaultCooldown is Settings.Cooldown when zero.
	DefaultCooldown = 60 * time.Second
)

// Settings configures a Breaker (the pipeline converts a dependency's
// breaker keys into it). Every zero value is a documented default.
type Settings struct {
	// Threshold is how many consecutive failures open the breaker.
	// Default 5 (DefaultThreshold).
	Threshold int
	// Cooldown is how long the breaker stays open before it lets one probe
	// through. Default 60s (DefaultCooldown).
	Cooldown time.Duration
	// Clock tells the time. Default clock.Real{}.
	Clock clock.Clock
}

// withDefaults fills in the zero values.
func (s Settings) withDefaults() Settings {
	if s.Threshold <= 0 {
		s.Threshold = DefaultThreshold
	}
	if s.Cooldown <= 0 {
		s.Cooldown = DefaultCooldown
	}
	if s.Clock == nil {
		s.Clock = clock.Real{}
	}
	return s
}

// State is a breaker's state.
type State int

// The three states.
const (
	// Closed lets every attempt through and counts consecutive failures.
	Closed State = iota
	// Open refuses every attempt until the cooldown has passed.
	Open
	// HalfOpen lets one probe through and refuses the rest until the probe's
	// outcome is known.
	HalfOpen
)

// String returns "closed", "open" or "half_open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "unknown"
}

// MarshalText writes the state's String form, so that snapshots encode as
// JSON strings.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Outcome is what an allowed attempt says about the dependency's health.
type Outcome int

// The outcomes.
const (
	// Success: the dependency answered (2xx, or anything that shows it is
	// working). It resets the failure count.
	Success Outcome = iota
	// Failure: a transient dependency failure (connect failure, timeout,
	// reset, 5xx, 429).
	Failure
	// Ignore: the outcome says nothing about the dependency's health: the
	// caller's own cancellation, a permanent 4xx, a refusal before sending.
	Ignore
)

// String returns "success", "failure" or "ignore".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignore:
		return "ignore"
	}
	return "unknown"
}

// Ticket is the permission Allow gives for one attempt. It must be passed to
// Done exactly once, in a defer, so that an attempt that panics still gives
// back a half-open breaker's one probe. The zero Ticket is never valid: Done
// ignores it.
type Ticket struct {
	generation uint64
}

// Breaker is one dependency's circuit breaker. It is safe for concurrent use.
type Breaker struct {
	name string

	mu         sync.Mutex
	settings   Settings
	state      State
	generation uint64 // bumped on every state change; starts at 1
	failures   int    // consecutive failures
	openedAt   time.Time
	probeOut   bool // half-open: the one probe has been allowed
}

// New returns a closed breaker for the named dependency.
func New(name string, s Settings) *Breaker {
	return &Breaker{name: name, settings: s.withDefaults(), generation: 1}
}

// Name is the dependency the breaker guards.
func (b *Breaker) Name() string { return b.name }

// Allow asks to send one attempt. When the breaker is open, or half-open
// with its one probe already out, it returns an *OpenError and nothing may be
// sent. Otherwise it returns a Ticket that must be passed to Done.
func (b *Breaker) Allow() (Ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.settings.Clock.Now()
	b.advance(now)
	switch b.state {
	case Open:
		return Ticket{}, &OpenError{Dependency: b.name, Failures: b.failures, RetryIn: b.retryIn(now)}
	case HalfOpen:
		if b.probeOut {
			return Ticket{}, &OpenError{Dependency: b.name, Failures: b.failures, ProbeInFlight: true}
		}
		b.probeOut = true
	}
	return Ticket{generation: b.generation}, nil
}

// Done reports the outcome of the attempt that t allowed. A ticket from an
// earlier state (the breaker has opened, half-opened or closed since) is
// ignored, so a slow attempt cannot undo a newer decision.
func (b *Breaker) Done(t Ticket, o Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.generation != b.generation {
		return
	}
	now := b.settings.Clock.Now()
	switch b.state {
	case Closed:
		switch o {
		case Success:
			b.failures = 0
		case Failure:
			b.failures++
			if b.failures >= b.settings.Threshold {
				b.open(now)
			}
		}
	case HalfOpen:
		switch o {
		case Success:
			b.setState(Closed)
			b.failures = 0
		case Failure:
			b.failures++
			b.open(now)
		case Ignore:
			// The probe said nothing: let another one through.
			b.probeOut = false
		}
	}
}

// State is the breaker's current state; an open breaker whose cooldown has
// passed reports HalfOpen.
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.settings.Clock.Now())
	return b.state
}

// Snapshot is a breaker's state for observations, metrics and the dashboard.
type Snapshot struct {
	// Name is the dependency.
	Name string `json:"name"`
	// State is closed, open or half_open.
	State State `json:"state"`
	// ConsecutiveFailures is the current run of failures.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// OpenedAt is when the breaker last opened (zero if it never did).
	OpenedAt time.Time `json:"opened_at"`
	// RetryIn is how long until an open breaker lets a probe through; 0
	// otherwise.
	RetryIn time.Duration `json:"retry_in"`
}

// Snapshot returns the breaker's current state.
func (b *Breaker) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.settings.Clock.Now()
	b.advance(now)
	s := Snapshot{Name: b.name, State: b.state, ConsecutiveFailures: b.failures, OpenedAt: b.openedAt}
	if b.state == Open {
		s.RetryIn = b.retryIn(now)
	}
	return s
}

// configure replaces the settings (a reloaded config), keeping the state.
func (b *Breaker) configure(s Settings) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settings = s.withDefaults()
}

// advance moves an open breaker whose cooldown has passed to half-open.
// b.mu must be held.
func (b *Breaker) advance(now time.Time) {
	if b.state == Open && !now.Before(b.openedAt.Add(b.settings.Cooldown)) {
		b.setState(HalfOpen)
	}
}

// open opens the breaker at now. b.mu must be held.
func (b *Breaker) open(now time.Time) {
	b.setState(Open)
	b.openedAt = now
}

// setState changes the state and starts a new generation. b.mu must be held.
func (b *Breaker) setState(s State) {
	b.state = s
	b.generation++
	b.probeOut = false
}

// retryIn is the time until an open breaker lets a probe through.
// b.mu must be held.
func (b *Breaker) retryIn(now time.Time) time.Duration {
	return max(b.openedAt.Add(b.settings.Cooldown).Sub(now), 0)
}
