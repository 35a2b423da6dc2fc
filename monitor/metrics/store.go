package metrics

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// InstrumentStore returns s with its durable writes timed into
// toolgate_store_commit_duration_seconds: Commit as op="commit",
// BeginOperation as op="begin_operation", AdmitStep as op="admit_step"
// and AdmitAndBegin (a write's step and operation in one write) as
// op="admit_and_begin". Every other method is s's own.
func InstrumentStore(s store.Store, m *Metrics) store.Store {
	return &instrumentedStore{Store: s, m: m}
}

// instrumentedStore times the writes of the store it embeds.
type instrumentedStore struct {
	store.Store
	m *Metrics
}

// Commit implements store.Store.
func (s *instrumentedStore) Commit(ctx context.Context, c *store.Commit) error {
	start := time.Now()
	err := s.Store.Commit(ctx, c)
	s.m.storeDuration.WithLabelValues("commit").Observe(time.Since(start).Seconds())
	return err
}

// BeginOperation implements store.Store.
func (s *instrumentedStore) BeginOperation(ctx context.Context, op *types.Operation) (*types.Operation, bool, error) {
	start := time.Now()
	existing, began, err := s.Store.BeginOperation(ctx, op)
	s.m.storeDuration.WithLabelValues("begin_operation").Observe(time.Since(start).Seconds())
	return existing, began, err
}

// AdmitStep implements store.Store, timed as op="admit_step".
func (s *instrumentedStore) AdmitStep(ctx context.Context, runID string) (int64, error) {
	start := time.Now()
	step, err := s.Store.AdmitStep(ctx, runID)
	s.m.storeDuration.WithLabelValues("admit_step").Observe(time.Since(start).Seconds())
	return step, err
}

// AdmitAndBegin implements store.Store, timed as op="admit_and_begin"
// (one durable write).
func (s *instrumentedStore) AdmitAndBegin(ctx context.Context, runID string, op *types.Operation) (int64, *types.Operation, bool, error) {
	start := time.Now()
	step, existing, began, err := s.Store.AdmitAndBegin(ctx, runID, op)
	s.m.storeDuration.WithLabelValues("admit_and_begin").Observe(time.Since(start).Seconds())
	return step, existing, began, err
}

var _ store.Store = (*instrumentedStore)(nil)

// Unwrap returns the store being timed, for callers that need its own
// methods beyond store.Store.
func (s *instrumentedStore) Unwrap() store.Store { return s.Store }
