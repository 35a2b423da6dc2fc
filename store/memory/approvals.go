package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/store"
)

var _ store.ApprovalStore = (*Store)(nil)

func copyApproval(a *store.Approval) *store.Approval {
	c := *a
	c.Args = append(json.RawMessage(nil), a.Args...)
	return &c
}

// CreateApproval inserts a pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *store.Approval) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.approvals == nil {
		s.approvals = map[string]*store.Approval{}
	}
	if _, ok := s.approvals[a.ID]; ok {
		return fmt.Errorf("memory: approval %q exists", a.ID)
	}
	s.approvals[a.ID] = copyApproval(a)
	return nil
}

// GetApproval returns a copy of one approval.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	a, ok := s.approvals[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	return copyApproval(a), nil
}

// FindApproval returns the newest approval with the binding.
func (s *Store) FindApproval(ctx context.Context, b store.Binding) (*store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var best *store.Approval
	for _, a := range s.approvals {
		if a.Binding() == b && (best == nil || a.CreatedAt.After(best.CreatedAt) || (a.CreatedAt.Equal(best.CreatedAt) && a.ID > best.ID)) {
			best = a
		}
	}
	if best == nil {
		return nil, store.ErrNotFound
	}
	return copyApproval(best), nil
}

// DecideApproval decides a pending, unexpired approval.
func (s *Store) DecideApproval(ctx context.Context, id string, status store.ApprovalStatus, by, comment string, at time.Time) (*store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	a, ok := s.approvals[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	if a.Status != store.ApprovalPending || !at.Before(a.ExpiresAt) {
		return copyApproval(a), store.ErrApprovalDecided
	}
	a.By, a.ByKey = store.SplitDecider(by)
	a.Status, a.Comment, a.DecidedAt = status, comment, at
	return copyApproval(a), nil
}

// UseApproval binds an approval to an operation, once.
func (s *Store) UseApproval(ctx context.Context, id, opKey string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return false, err
	}
	a, ok := s.approvals[id]
	if !ok {
		return false, store.ErrNotFound
	}
	if a.UsedBy == "" {
		a.UsedBy = opKey
	}
	return a.UsedBy == opKey, nil
}

// ListApprovals returns approvals, newest first.
func (s *Store) ListApprovals(ctx context.Context, status store.ApprovalStatus, limit int) ([]store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	var out []store.Approval
	for _, a := range s.approvals {
		if status == "" || a.Status == status {
			out = append(out, *copyApproval(a))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID > out[j].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
