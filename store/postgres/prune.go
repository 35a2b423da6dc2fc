package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pruneChunk is the most rows one prune statement deletes from one table.
const pruneChunk = 5000

// pruneOperationsSQL deletes at most $2 completed operations last updated
// before $1; the outer WHERE checks each row again once it is locked.
const pruneOperationsSQL = `DELETE FROM operations WHERE status = 'completed' AND updated_at < $1 AND "key" IN
(SELECT "key" FROM operations WHERE status = 'completed' AND updated_at < $1 LIMIT $2)`

// Prune deletes executions that finished before cutoff, completed
// operations last updated before cutoff and stats buckets that start before
// cutoff. It deletes in chunks of at most 5000 rows per statement, each its
// own transaction, so that a large prune holds no lock for long; on an
// error the chunks already done stay deleted, and the count returned is
// theirs. Replicas may prune at the same time.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for _, query := range []string{queries.PruneExecutions, pruneOperationsSQL} {
		for {
			n, err := s.update(ctx, "prune", query, nanos(cutoff), pruneChunk)
			total += n
			if err != nil {
				return total, err
			}
			if n < pruneChunk {
				break
			}
		}
	}
	err := s.write(ctx, "prune stats", func(ctx context.Context, conn *pgxpool.Conn) error {
		tag, err := conn.Exec(ctx, queries.PruneStats, nanos(cutoff))
		total += tag.RowsAffected()
		return err
	})
	return total, err
}
