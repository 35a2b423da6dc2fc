package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
)

// loadStatsSQL reads the buckets since $1 in (start, tool, replica) order.
const loadStatsSQL = `SELECT tool, start, width, replica, data FROM stats_buckets WHERE start >= $1 ORDER BY start, tool, replica`

// SaveStats inserts or replaces buckets by (tool, start, replica), all in
// one round trip and one transaction (a pgx batch).
func (s *Store) SaveStats(ctx context.Context, buckets []store.StatsBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	var batch pgx.Batch
	for _, b := range buckets {
		data := b.Data
		if data == nil {
			data = []byte{} // the column is NOT NULL; nil would be NULL
		}
		batch.Queue(queries.UpsertStats, b.Tool, nanos(b.Start), int64(b.Width), b.Replica, data)
	}
	return s.write(ctx, "save stats", func(ctx context.Context, conn *pgxpool.Conn) error {
		return conn.SendBatch(ctx, &batch).Close()
	})
}

// LoadStats returns the buckets that start at or after since.
func (s *Store) LoadStats(ctx context.Context, since time.Time) ([]store.StatsBucket, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	rows, err := s.pool.Query(ctx, loadStatsSQL, nanos(since))
	if err != nil {
		return nil, s.readErr("load stats", err)
	}
	defer rows.Close()
	var out []store.StatsBucket
	for rows.Next() {
		var b store.StatsBucket
		var start, width int64
		if err := rows.Scan(&b.Tool, &start, &width, &b.Replica, &b.Data); err != nil {
			return nil, s.readErr("load stats", err)
		}
		b.Start, b.Width = time.Unix(0, start).UTC(), time.Duration(width)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr("load stats", err)
	}
	return out, nil
}
