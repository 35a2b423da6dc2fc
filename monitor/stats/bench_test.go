package stats

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// BenchmarkQueryMillionCalls records 1,000,000 calls of one tool through an
// Aggregator, spread over a day of one-minute buckets (1,440 buckets of
// about 694 calls), flushed to SQLite as the day goes, and measures
// Query(24h) by the same aggregator. It also reports the stored (encoded)
// bytes of a bucket and the heap of one bucket holding 1M latencies.
//
//	go test -run '^$' -bench QueryMillionCalls -benchtime 50x ./monitor/stats/
func BenchmarkQueryMillionCalls(b *testing.B) {
	const calls, minutes = 1_000_000, 24 * 60
	clk := newClock()
	st := newStore(b, "sqlite", clk)
	agg := newAgg(b, st, clk, "bench")
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	x := row("issue_refund", t0, 0)
	for k := range calls {
		at := t0.Add(time.Duration(k) * (24 * time.Hour / calls))
		if at.Sub(clk.Now()) >= time.Minute { // the flusher's pace, in fake time
			clk.Set(at)
			if err := agg.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		x.FinishedAt, x.LatencyMS = at, 20+r.ExpFloat64()*150
		if k%97 == 0 {
			x.LatencyMS *= 20 // a tail
		}
		agg.Record(x)
	}
	clk.Set(t0.Add(24*time.Hour - time.Second))
	if err := agg.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	stored, err := st.LoadStats(ctx, t0)
	if err != nil {
		b.Fatal(err)
	}
	var bytes int
	for _, s := range stored {
		bytes += len(s.Data)
	}
	if len(stored) != minutes {
		b.Fatalf("%d buckets stored, want %d", len(stored), minutes)
	}

	var rep *Report
	for b.Loop() {
		if rep, err = agg.Query(ctx, 24*time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	if f := rep.Tools["issue_refund"]; f == nil || f.Calls != calls || rep.Source != SourceSketch {
		b.Fatalf("report %+v", rep.Tools["issue_refund"])
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
	b.ReportMetric(float64(bytes)/float64(len(stored)), "stored-B/bucket")
	b.ReportMetric(float64(bucketHeap(1_000_000)), "heap-B/bucket-of-1M")
}

// bucketHeap is the heap one in-memory bucket holds after n latencies
// spread log-uniformly from 0.1 ms to 60 s.
func bucketHeap(n int) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := newAggregate()
	r := rand.New(rand.NewPCG(2, 2))
	x := row("t", t0, 0)
	for range n {
		x.LatencyMS = wideLatency(r)
		a.add(x)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(a)
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkQueryExactRows measures the exact path: a window of 10,000 rows
// (the default limit) read back from SQLite.
func BenchmarkQueryExactRows(b *testing.B) {
	const n = DefaultExactRows
	clk := newClock()
	st := newStore(b, "sqlite", clk)
	agg := newAgg(b, st, clk, "bench")
	rows := make([]*types.Execution, n)
	r := rand.New(rand.NewPCG(1, 1))
	for k := range rows {
		rows[k] = row("get_order", t0.Add(time.Duration(k)*time.Millisecond*300), 20+r.ExpFloat64()*150)
		agg.Record(rows[k])
	}
	commitRowsConcurrently(b, st, rows)
	clk.Set(t0.Add(time.Hour - time.Second))
	var rep *Report
	var err error
	for b.Loop() {
		if rep, err = agg.Query(context.Background(), time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	if rep.Source != SourceRows || rep.Tools["get_order"].Calls != n {
		b.Fatalf("report from %s, %d calls", rep.Source, rep.Tools["get_order"].Calls)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
}

// commitRowsConcurrently commits rows from many goroutines, so that the
// SQLite store packs them into few transactions.
func commitRowsConcurrently(b *testing.B, st store.Store, rows []*types.Execution) {
	b.Helper()
	commitRows(b, st, nil) // creates the run
	const workers = 64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(rows); k += workers {
				c := *rows[k]
				c.Step = int64(k + 1)
				if err := st.Commit(context.Background(), &store.Commit{Execution: &c}); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}
