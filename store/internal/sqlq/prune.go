package sqlq

// The statements of pruning and of stats buckets, in PostgreSQL's form
// (see Dialect.Bind). Pruning operations is each store's own: PostgreSQL
// checks each row again once it is locked, SQLite deletes by rowid.
const (
	pruneExecutionsSQL = `DELETE FROM executions WHERE id IN
(SELECT id FROM executions WHERE finished_at < $1 LIMIT $2)`
	pruneStatsSQL  = `DELETE FROM stats_buckets WHERE start < $1`
	upsertStatsSQL = `INSERT INTO stats_buckets (tool, start, width, replica, data) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tool, start, replica) DO UPDATE SET width = excluded.width, data = excluded.data`
)
