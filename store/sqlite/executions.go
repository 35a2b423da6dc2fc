package sqlite

import (
	"context"

	"github.com/toolgate/toolgate/types"
)

// ListExecutions returns the rows f selects, newest first unless
// f.Ascending; a limit of 0 or less means 100. Rows are in commit order
// (their IDs), which within a run is also version order.
func (s *Store) ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error) {
	return s.shared().ListExecutions(ctx, f)
}
