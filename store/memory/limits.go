package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var _ store.Limiter = (*Store)(nil)

// limits are the state-writer slots and the quota reservations, under the
// store's mutex.
type limits struct {
	writers      map[string]map[string]store.StateWriter // by run id, then holder
	reservations map[quotaKey][]reservation
}

type quotaKey struct{ quota, key string }

type reservation struct {
	op     string
	at     time.Time
	amount int64
}

// Admit is store.Limiter's: step, slot, operation and reservations, all or
// nothing, under the store's mutex.
func (s *Store) Admit(ctx context.Context, a *store.Admission) (*store.Admitted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	run, ok := s.runs[a.RunID]
	if !ok {
		return nil, fmt.Errorf("memory: admit on run %q: %w", a.RunID, store.ErrNotFound)
	}
	needSlot := a.Writer != nil
	if a.Operation != nil {
		if op, exists := s.operations[a.Operation.Key]; exists && op.Status != types.OpUnknown {
			needSlot = false // a repeat that waits or replays
		}
	}
	if needSlot && store.Conflicts(s.limits.slotHolders(a.RunID), a.Writer, a.Now) {
		return nil, fmt.Errorf("memory: admit on run %q: %w", a.RunID, store.ErrWriterBusy)
	}
	if a.Step == 0 && run.OutOfSteps() {
		return nil, fmt.Errorf("memory: admit on run %q (max %d): %w", a.RunID, run.MaxSteps, store.ErrStepBudget)
	}
	out := &store.Admitted{}
	if a.Operation != nil {
		if _, exists := s.operations[a.Operation.Key]; !exists {
			if d := s.limits.check(a.Quotas, a.Now); d != nil {
				return &store.Admitted{Denied: d}, nil
			}
		}
		out.Existing, out.Began = s.beginLocked(a.Operation)
		if out.Began {
			s.limits.reserve(a.Quotas, a.Operation.Key, a.Now)
		}
	}
	if needSlot {
		s.limits.takeWriter(a.RunID, a.Writer, a.Now)
		out.Writer = true
	}
	out.Step, out.Version = a.Step, run.Version
	if a.Step == 0 {
		run.Step++
		run.UpdatedAt = s.now()
		out.Step = run.Step
	}
	return out, nil
}

// ReleaseStateWriter clears the run's slot if holder holds it.
func (s *Store) ReleaseStateWriter(ctx context.Context, runID, holder string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.limits.releaseWriter(runID, holder)
	return nil
}

// QuotaUsage lists the use of every (quota, key) inside its window.
func (s *Store) QuotaUsage(ctx context.Context, now time.Time, windows map[string]time.Duration) ([]store.QuotaUse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.QuotaUse
	for k, rows := range s.limits.reservations {
		window, ok := windows[k.quota]
		if !ok {
			continue
		}
		use := store.QuotaUse{Quota: k.quota, Key: k.key}
		for _, r := range rows {
			if !r.at.After(now.Add(-window)) {
				continue
			}
			use.Used = store.AddSaturating(use.Used, r.amount)
			use.Reservations++
			if use.Oldest.IsZero() || r.at.Before(use.Oldest) {
				use.Oldest = r.at
			}
		}
		if use.Reservations > 0 {
			out = append(out, use)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Quota != out[j].Quota {
			return out[i].Quota < out[j].Quota
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// check returns the first claim that would pass its limit, or nil.
func (l *limits) check(claims []store.QuotaClaim, now time.Time) *store.QuotaDenial {
	for _, c := range claims {
		var used int64
		all := l.reservations[quotaKey{c.Quota, c.Key}]
		for _, r := range all {
			if r.at.After(now.Add(-c.Window)) {
				used = store.AddSaturating(used, r.amount)
			}
		}
		if !store.Fits(used, c.Amount, c.Limit) {
			var rows []store.Reservation
			for _, r := range all {
				if r.at.After(now.Add(-c.Window)) {
					rows = append(rows, store.Reservation{At: r.at, Amount: r.amount})
				}
			}
			return &store.QuotaDenial{Quota: c.Quota, Key: c.Key, Used: used, Limit: c.Limit, Amount: c.Amount,
				FreesAt: store.FreesAt(rows, used, c.Amount, c.Limit, c.Window)}
		}
	}
	return nil
}

func (l *limits) reserve(claims []store.QuotaClaim, op string, now time.Time) {
	for _, c := range claims {
		if l.reservations == nil {
			l.reservations = map[quotaKey][]reservation{}
		}
		k := quotaKey{c.Quota, c.Key}
		l.reservations[k] = append(l.reservations[k], reservation{op: op, at: now, amount: c.Amount})
	}
}

// release drops the reservations of operation op.
func (l *limits) release(op string) {
	for k, rows := range l.reservations {
		kept := rows[:0]
		for _, r := range rows {
			if r.op != op {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(l.reservations, k)
		} else {
			l.reservations[k] = kept
		}
	}
}
