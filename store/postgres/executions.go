package postgres

import (
	"context"

	"github.com/toolgate/toolgate/types"
)

// ListExecutions returns the rows f selects, newest first unless
// f.Ascending; a limit of 0 or less means 100. With a run, rows are in
// version order (commit order within the run); without one, in id order,
// which across runs follows commit order only roughly (ids are taken at
// INSERT, not at COMMIT).
func (s *Store) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	return s.shared().ListExecutions(ctx, f)
}
