package memory

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/store"
)

// slotHolders returns the run's holders (s.mu held).
func (l *limits) slotHolders(runID string) []store.StateWriter {
	out := make([]store.StateWriter, 0, len(l.writers[runID]))
	for _, w := range l.writers[runID] {
		out = append(out, w)
	}
	return out
}

// takeWriter gives c's holder the slot, dropping holders presumed dead at
// now.
func (l *limits) takeWriter(runID string, c *store.WriterClaim, now time.Time) {
	if l.writers == nil {
		l.writers = map[string]map[string]store.StateWriter{}
	}
	if l.writers[runID] == nil {
		l.writers[runID] = map[string]store.StateWriter{}
	}
	for h, w := range l.writers[runID] {
		if w.LeaseUntil.Before(now) {
			delete(l.writers[runID], h)
		}
	}
	l.writers[runID][c.Holder] = store.StateWriter{Holder: c.Holder, Owner: c.Owner, LeaseUntil: c.LeaseUntil, Shared: c.Shared}
}

func (l *limits) releaseWriter(runID, holder string) {
	if m := l.writers[runID]; m != nil {
		delete(m, holder)
		if len(m) == 0 {
			delete(l.writers, runID)
		}
	}
}

// abandon clears the slots of owner (of everyone when owner is "").
func (l *limits) abandon(owner string) {
	for run, m := range l.writers {
		for h, w := range m {
			if owner == "" || w.Owner == owner {
				delete(m, h)
			}
		}
		if len(m) == 0 {
			delete(l.writers, run)
		}
	}
}

// StateWriters lists the run's slot holders.
func (s *Store) StateWriters(ctx context.Context, runID string) ([]store.StateWriter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.limits.slotHolders(runID), nil
}
