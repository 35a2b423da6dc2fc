package breaker

import (
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/clock"
)

// Set holds one Breaker per dependency name, created on first use. It is
// safe for concurrent use.
type Set struct {
	clk clock.Clock

	mu       sync.RWMutex
	breakers map[string]*setEntry
}

// setEntry remembers the settings a breaker was made with (without a clock:
// the set's own is used).
type setEntry struct {
	cfg     Settings
	breaker *Breaker
}

// NewSet returns an empty set whose breakers read clk (nil means the wall
// clock).
func NewSet(clk clock.Clock) *Set {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Set{clk: clk, breakers: make(map[string]*setEntry)}
}

// Get returns the breaker of the named dependency, creating it with st on
// first use. When st differs from the settings the breaker has (a reloaded
// config), the new settings apply and its state is kept. st.Clock is
// ignored: the set's breakers read the set's clock.
func (s *Set) Get(name string, st Settings) *Breaker {
	st.Clock = nil
	s.mu.RLock()
	entry, ok := s.breakers[name]
	s.mu.RUnlock()
	if ok && entry.cfg == st {
		return entry.breaker
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	entry, ok = s.breakers[name]
	if !ok {
		entry = &setEntry{cfg: st, breaker: New(name, s.settings(st))}
		s.breakers[name] = entry
		return entry.breaker
	}
	if entry.cfg != st {
		entry.breaker.configure(s.settings(st))
		// Replace rather than mutate: readers hold the old entry unlocked.
		s.breakers[name] = &setEntry{cfg: st, breaker: entry.breaker}
	}
	return entry.breaker
}

// Snapshots returns every breaker's state, sorted by name.
func (s *Set) Snapshots() []Snapshot {
	s.mu.RLock()
	breakers := make([]*Breaker, 0, len(s.breakers))
	for _, entry := range s.breakers {
		breakers = append(breakers, entry.breaker)
	}
	s.mu.RUnlock()

	snapshots := make([]Snapshot, 0, len(breakers))
	for _, b := range breakers {
		snapshots = append(snapshots, b.Snapshot())
	}
	slices.SortFunc(snapshots, func(a, b Snapshot) int { return strings.Compare(a.Name, b.Name) })
	return snapshots
}

// settings is st on the set's clock.
func (s *Set) settings(st Settings) Settings {
	st.Clock = s.clk
	return st
}

// Forget drops the named dependency's breaker: its next Get starts a fresh,
// closed one. A caller still holding the old breaker may go on using it; it
// is no longer listed or returned.
func (s *Set) Forget(name string) {
	s.mu.Lock()
	delete(s.breakers, name)
	s.mu.Unlock()
}
