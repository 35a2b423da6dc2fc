package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// defaultListLimit is the row count of a list whose limit is 0 or less.
const defaultListLimit = 100

// BeginOperation records a copy of op as started (without a result),
// unless its key exists. A zero CreatedAt is now and a zero UpdatedAt is
// CreatedAt.
func (s *Store) BeginOperation(ctx context.Context, op *types.Operation) (*types.Operation, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, false, err
	}
	existing, began := s.beginLocked(op)
	return existing, began, nil
}

// beginLocked is BeginOperation with s.mu held.
func (s *Store) beginLocked(op *types.Operation) (*types.Operation, bool) {
	if existing, ok := s.operations[op.Key]; ok {
		return copyOperation(&existing.Operation), false
	}
	s.opSeq++
	rec := &operation{Operation: *op, seq: s.opSeq}
	rec.Status = types.OpStarted
	rec.Result = nil
	rec.Args = cloneJSON(op.Args)
	rec.CompletedAt = time.Time{}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = s.now()
	}
	if rec.UpdatedAt.IsZero() {
		rec.UpdatedAt = rec.CreatedAt
	}
	s.operations[rec.Key] = rec
	return nil, true
}

// GetOperation returns a copy of the operation, or store.ErrNotFound.
func (s *Store) GetOperation(ctx context.Context, key string) (*types.Operation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	rec, ok := s.operations[key]
	if !ok {
		return nil, fmt.Errorf("memory: get operation %q: %w", key, store.ErrNotFound)
	}
	return copyOperation(&rec.Operation), nil
}

// ClaimOperation moves an unknown operation back to started under owner.
// It returns store.ErrNotFound when no operation has the key.
func (s *Store) ClaimOperation(ctx context.Context, key, owner string, leaseUntil time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return false, err
	}
	rec, ok := s.operations[key]
	if !ok {
		return false, fmt.Errorf("memory: claim operation %q: %w", key, store.ErrNotFound)
	}
	if rec.Status != types.OpUnknown {
		return false, nil
	}
	rec.Status = types.OpStarted
	rec.Owner = owner
	rec.LeaseUntil = leaseUntil
	rec.UpdatedAt = s.now()
	return true, nil
}

// ExpireLeases turns started operations whose lease ended before now (a
// zero lease counts as ended) into unknown ones.
func (s *Store) ExpireLeases(ctx context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	turned := 0
	for _, rec := range s.operations {
		if rec.Status == types.OpStarted && rec.LeaseUntil.Before(now) {
			rec.Status = types.OpUnknown
			rec.UpdatedAt = now
			turned++
		}
	}
	return turned, nil
}

// AbandonOwner turns the started operations of owner (of everyone when
// owner is "") into unknown ones.
func (s *Store) AbandonOwner(ctx context.Context, owner string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	now := s.now()
	turned := 0
	for _, rec := range s.operations {
		if rec.Status == types.OpStarted && (owner == "" || rec.Owner == owner) {
			rec.Status = types.OpUnknown
			rec.UpdatedAt = now
			turned++
		}
	}
	s.limits.abandon(owner)
	return turned, nil
}

// ListOperations returns copies of the operations in status, oldest
// (CreatedAt, then insertion) first; a limit of 0 or less means 100.
func (s *Store) ListOperations(ctx context.Context, status types.OpStatus, limit int) ([]types.Operation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultListLimit
	}
	var found []*operation
	for _, rec := range s.operations {
		if rec.Status == status {
			found = append(found, rec)
		}
	}
	slices.SortFunc(found, func(a, b *operation) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	found = found[:min(limit, len(found))]
	out := make([]types.Operation, len(found))
	for i, rec := range found {
		out[i] = *copyOperation(&rec.Operation)
	}
	return out, nil
}
