package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store"
)

const (
	upsertStatsSQL = `INSERT INTO stats_buckets (tool, start, width, replica, data) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (tool, start, replica) DO UPDATE SET width = excluded.width, data = excluded.data`
	loadStatsSQL  = `SELECT tool, start, width, replica, data FROM stats_buckets WHERE start >= ? ORDER BY start, tool, replica`
	pruneStatsSQL = `DELETE FROM stats_buckets WHERE start < ?`
)

// SaveStats inserts or replaces buckets by (tool, start, replica), all in
// one write.
func (s *Store) SaveStats(ctx context.Context, buckets []store.StatsBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	err := s.w.doLight(ctx, func(ctx context.Context, tx *writeTx) error {
		for _, b := range buckets {
			if _, err := tx.exec(ctx, upsertStatsSQL, b.Tool, nanos(b.Start), int64(b.Width), b.Replica, b.Data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: save stats: %w", err)
	}
	return nil
}

// LoadStats returns the buckets that start at or after since.
func (s *Store) LoadStats(ctx context.Context, since time.Time) ([]store.StatsBucket, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	rows, err := s.query(ctx, loadStatsSQL, nanos(since))
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
