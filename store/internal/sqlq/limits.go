package sqlq

import (
	"context"
	"errors"
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
	quotaUsedSQL = `SELECT COALESCE(SUM(amount), 0)::bigint FROM quota_reservations WHERE quota = $1 AND "key" = $2 AND at > $3`
	// quotaFreesSQL finds the oldest reservation whose expiry, with every
	// older one's, leaves room for the claim: used - freed + amount <=
	// limit, written used - freed <= limit - amount so that it cannot
	// overflow (the caller asks only when amount <= limit, and freed <=
	// used). %s is the dialect's insertion order of reservations.
	quotaFreesSQL = `SELECT at FROM (
    SELECT at, SUM(amount) OVER (ORDER BY at, %s) AS freed
    FROM quota_reservations WHERE quota = $1 AND "key" = $2 AND at > $3
) w WHERE $4::bigint - freed <= $6::bigint - $5::bigint ORDER BY at LIMIT 1`
)

// SumRow runs query, one of CheckQuotas's sums, with args inside an
// admission's transaction and scans its one column into dest.
type SumRow func(query string, args []any, dest *int64) error

// CheckQuotas returns the first of claims that would pass its limit at
// now, with the time its room frees when it ever will, or nil when all
// fit. It reads the sums through sum, in the admission's transaction (the
// caller makes them stay true until its reservations are written); noRows
// is the driver's error for a query that returned no row.
func (d *Dialect) CheckQuotas(claims []store.QuotaClaim, now time.Time, sum SumRow, noRows error) (*store.QuotaDenial, error) {
	for _, c := range claims {
		since := Nanos(now.Add(-c.Window))
		var used int64
		if err := sum(d.queries.quotaUsed, []any{c.Quota, c.Key, since}, &used); err != nil {
			return nil, err
		}
		if store.Fits(used, c.Amount, c.Limit) {
			continue
		}
		denial := &store.QuotaDenial{Quota: c.Quota, Key: c.Key, Used: used, Limit: c.Limit, Amount: c.Amount}
		if c.Amount <= c.Limit {
			var frees int64
			err := sum(d.queries.quotaFrees, []any{c.Quota, c.Key, since, used, c.Amount, c.Limit}, &frees)
			switch {
			case err == nil:
				denial.FreesAt = FromNanos(frees).Add(c.Window)
			case !errors.Is(err, noRows):
				return nil, err
			}
		}
		return denial, nil
	}
	return nil, nil
}

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
