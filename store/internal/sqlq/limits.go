package sqlq

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/toolgate/toolgate/store"
)

// The limits' read statements, in PostgreSQL's form (see Dialect.Bind).
const (
	selectWritersSQL = `SELECT holder, owner, lease_until, shared FROM state_writers WHERE run_id = $1`
	quotaUsageSQL    = `SELECT "key", SUM(amount)::bigint, COUNT(*), MIN(at) FROM quota_reservations
WHERE quota = $1 AND at > $2 GROUP BY "key" ORDER BY "key"`
)

// StateWriters lists the run's slot holders.
func (r Reads) StateWriters(ctx context.Context, runID string) ([]store.StateWriter, error) {
	return list(ctx, r, "state writers of "+runID, r.q.selectWriters, []any{runID}, func(row Row, w *store.StateWriter) error {
		return row.Scan(&w.Holder, &w.Owner, r.cols.Time(&w.LeaseUntil), &w.Shared)
	})
}

// QuotaUsage lists the use of every (quota, key) inside its window, quota
// by quota in name order, then key by key.
func (r Reads) QuotaUsage(ctx context.Context, now time.Time, windows map[string]time.Duration) ([]store.QuotaUse, error) {
	if r.db.Closed() {
		return nil, errClosed
	}
	var out []store.QuotaUse
	for _, quota := range slices.Sorted(maps.Keys(windows)) {
		args := []any{quota, Nanos(now.Add(-windows[quota]))}
		uses, err := list(ctx, r, "quota usage", r.q.quotaUsage, args, func(row Row, u *store.QuotaUse) error {
			u.Quota = quota
			return row.Scan(&u.Key, &u.Used, &u.Reservations, r.cols.Time(&u.Oldest))
		})
		if err != nil {
			return nil, err
		}
		out = append(out, uses...)
	}
	return out, nil
}
