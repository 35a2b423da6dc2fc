package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/store"
)

// countStatsSQL sizes LoadStats's result: one pass over the start index,
// without the table.
const countStatsSQL = `SELECT count(*) FROM stats_buckets WHERE start >= ?`

// loadStatsSQL reads the buckets since ?1 tool by tool along the primary
// key (tool, start, replica): a loose index scan (the recursive CTE) finds
// the tools, one b-tree search each, then each tool's buckets are one
// range of the table (CROSS JOIN keeps the tools the outer loop). Through
// the start index, each bucket cost a second b-tree search for its columns
// (the index holds only the key), about half of SQLite's time. The rows
// come tool by tool; LoadStats merges them into start order, which is
// cheaper than SQLite sorting them (blobs and all).
const loadStatsSQL = `WITH RECURSIVE tools (tool) AS (
	SELECT min(tool) FROM stats_buckets
	UNION ALL
	SELECT (SELECT min(tool) FROM stats_buckets WHERE tool > tools.tool) FROM tools WHERE tools.tool IS NOT NULL
)
SELECT s.tool, s.start, s.width, s.replica, s.data FROM tools CROSS JOIN stats_buckets AS s
WHERE s.tool = tools.tool AND s.start >= ?`

// SaveStats inserts or replaces buckets by (tool, start, replica), all in
// one write.
func (s *Store) SaveStats(ctx context.Context, buckets []store.StatsBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	err := s.w.doLight(ctx, func(ctx context.Context, tx *writeTx) error {
		for _, b := range buckets {
			if _, err := tx.exec(ctx, queries.UpsertStats, b.Tool, nanos(b.Start), int64(b.Width), b.Replica, b.Data); err != nil {
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

// LoadStats returns the buckets that start at or after since, ordered by
// start, tool and replica.
func (s *Store) LoadStats(ctx context.Context, since time.Time) ([]store.StatsBucket, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	// The count is only a capacity: growing the result by appending
	// allocated five times its size.
	var n int
	if err := s.queryRow(ctx, countStatsSQL, nanos(since)).Scan(&n); err != nil {
		return nil, s.readErr("load stats", err)
	}
	rows, err := s.query(ctx, loadStatsSQL, nanos(since))
	if err != nil {
		return nil, s.readErr("load stats", err)
	}
	defer rows.Close()
	var (
		out          = make([]store.StatsBucket, 0, n)
		b            store.StatsBucket // outside the loop: Scan's arguments escape
		start, width intColumn
		data         blobColumn
	)
	for rows.Next() {
		if err := rows.Scan(&b.Tool, &start, &width, &b.Replica, &data); err != nil {
			return nil, s.readErr("load stats", err)
		}
		b.Start, b.Width, b.Data = time.Unix(0, int64(start)).UTC(), time.Duration(width), data.v
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr("load stats", err)
	}
	return sortBuckets(out), nil
}

// intColumn scans an INTEGER column. database/sql assigns an int64 to an
// *int64 through reflect; a Scanner is a plain method call.
type intColumn int64

// Scan implements sql.Scanner.
func (c *intColumn) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("want an integer, have %T", src)
	}
	*c = intColumn(v)
	return nil
}

// blobColumn scans a BLOB column into v, a slice of a buffer shared by the
// rows of a query: database/sql would copy each blob into an allocation of
// its own (and the driver has already copied it once).
type blobColumn struct {
	buf []byte
	v   []byte
}

// blobChunk is the least that blobColumn allocates at a time.
const blobChunk = 32 << 10

// Scan implements sql.Scanner. An empty blob is a nil v.
func (c *blobColumn) Scan(src any) error {
	b, ok := src.([]byte)
	if !ok && src != nil {
		return fmt.Errorf("want a blob, have %T", src)
	}
	if len(b) == 0 {
		c.v = nil
		return nil
	}
	if len(b) > cap(c.buf)-len(c.buf) {
		c.buf = make([]byte, 0, max(len(b), blobChunk))
	}
	n := len(c.buf)
	c.buf = append(c.buf, b...)
	c.v = c.buf[n:len(c.buf):len(c.buf)] // capped: an append to one never writes over the next
	return nil
}

// compareBuckets orders buckets by start, tool and replica.
func compareBuckets(x, y *store.StatsBucket) int {
	if c := x.Start.Compare(y.Start); c != 0 {
		return c
	}
	if c := strings.Compare(x.Tool, y.Tool); c != 0 {
		return c
	}
	return strings.Compare(x.Replica, y.Replica)
}

// sortBuckets returns b ordered by compareBuckets. loadStatsSQL returns
// runs already in that order (one per tool), so it finds the runs and
// merges them with a heap of their heads: n·log(runs) comparisons, none
// for one tool.
func sortBuckets(b []store.StatsBucket) []store.StatsBucket {
	var runs []bucketRun
	from := 0
	for i := 1; i < len(b); i++ {
		if compareBuckets(&b[i-1], &b[i]) > 0 {
			runs = append(runs, bucketRun{from, i})
			from = i
		}
	}
	if len(runs) == 0 {
		return b
	}
	runs = append(runs, bucketRun{from, len(b)})
	h := bucketHeap{b: b, runs: runs}
	for i := len(runs)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	out := make([]store.StatsBucket, 0, len(b))
	for len(h.runs) > 0 {
		r := &h.runs[0]
		out = append(out, b[r.next])
		if r.next++; r.next == r.end {
			last := len(h.runs) - 1
			h.runs[0] = h.runs[last]
			h.runs = h.runs[:last]
		}
		h.down(0)
	}
	return out
}

// bucketRun is the part of a run of buckets not yet merged: [next, end).
type bucketRun struct{ next, end int }

// bucketHeap is a min-heap of runs by their next bucket.
type bucketHeap struct {
	b    []store.StatsBucket
	runs []bucketRun
}

func (h *bucketHeap) less(i, j int) bool {
	return compareBuckets(&h.b[h.runs[i].next], &h.b[h.runs[j].next]) < 0
}

// down restores the heap order below i.
func (h *bucketHeap) down(i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h.runs) && h.less(c, least) {
				least = c
			}
		}
		if least == i {
			return
		}
		h.runs[i], h.runs[least] = h.runs[least], h.runs[i]
		i = least
	}
}
