package memory

import (
	"context"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var _ store.Admitter = (*Store)(nil)

// AdmitAndBegin is AdmitStep then, if a step was admitted, BeginOperation.
// The memory store keeps nothing across a crash, so the two need not be one
// write.
func (s *Store) AdmitAndBegin(ctx context.Context, runID string, op *types.Operation) (int64, *types.Operation, bool, error) {
	step, err := s.AdmitStep(ctx, runID)
	if err != nil {
		return 0, nil, false, err
	}
	existing, began, err := s.BeginOperation(ctx, op)
	return step, existing, began, err
}
