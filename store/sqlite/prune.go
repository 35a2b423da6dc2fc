package sqlite

import (
	"context"
	"fmt"
	"time"
)

// pruneChunk is the most rows one prune write deletes from one table.
const pruneChunk = 5000

// pruneOperationsSQL deletes at most ?2 completed operations last updated
// before ?1.
const pruneOperationsSQL = `DELETE FROM operations WHERE rowid IN
(SELECT rowid FROM operations WHERE status = 'completed' AND updated_at < ? LIMIT ?)`

// Prune deletes executions that finished before cutoff and completed
// operations last updated before cutoff. It deletes in chunks of at most
// 5000 rows per table, each chunk its own write, so that a large prune does
// not hold up the commits queued behind it; on an error the chunks already
// done stay deleted, and the count returned is theirs.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for more := true; more; {
		var chunk int64
		err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
			// The writer may run this twice (see writer.add): start
			// from zero each time.
			chunk, more = 0, false
			for _, query := range []string{queries.PruneExecutions, pruneOperationsSQL} {
				n, err := tx.affected(ctx, query, nanos(cutoff), pruneChunk)
				if err != nil {
					return err
				}
				chunk += n
				more = more || n == pruneChunk
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("sqlite: prune: %w", err)
		}
		total += chunk
	}
	var stats int64
	err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) (err error) {
		stats, err = tx.affected(ctx, queries.PruneStats, nanos(cutoff))
		return err
	})
	if err != nil {
		return total, fmt.Errorf("sqlite: prune stats: %w", err)
	}
	return total + stats, nil
}
