package memory

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// CreateRun stores a copy of run with Step and Version 0. An InitialState
// left nil is taken from State; a zero CreatedAt is now and a zero UpdatedAt
// is CreatedAt.
func (s *Store) CreateRun(ctx context.Context, run *types.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	if _, taken := s.runs[run.ID]; taken {
		return fmt.Errorf("memory: create run %q: %w", run.ID, store.ErrRunExists)
	}
	c := copyRun(run)
	c.Step, c.Version = 0, 0
	if c.InitialState == nil {
		c.InitialState = cloneJSON(c.State)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	s.runs[c.ID] = c
	return nil
}

// GetRun returns a copy of the run, or store.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id string) (*types.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	run, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("memory: get run %q: %w", id, store.ErrNotFound)
	}
	return copyRun(run), nil
}

// AdmitStep takes the run's next step number.
func (s *Store) AdmitStep(ctx context.Context, runID string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	run, ok := s.runs[runID]
	if !ok {
		return 0, fmt.Errorf("memory: admit step on run %q: %w", runID, store.ErrNotFound)
	}
	if run.OutOfSteps() {
		return 0, fmt.Errorf("memory: admit step on run %q (max %d): %w", runID, run.MaxSteps, store.ErrStepBudget)
	}
	run.Step++
	run.UpdatedAt = s.now()
	return run.Step, nil
}
