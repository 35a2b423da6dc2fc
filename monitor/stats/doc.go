// Package stats turns execution rows into the figures of GET /v1/stats
// (docs/http-api.md): per tool and per dependency, calls, error and
// retry rates, latency percentiles, the read timeout and how close p95 is to
// it, a suggested timeout, token totals and counts by outcome code; plus a
// time series for charts and a short list of alerts.
//
// # Where the figures come from
//
// An Aggregator is a monitor.Sink. Per (tool, time bucket of Config.Width,
// default one minute) it keeps counters and a DDSketch of the latencies, and
// it flushes those buckets to the store (store.SaveStats) every
// Config.FlushInterval (default 10s), on Flush and on Close, under its
// replica name. A query loads the buckets of every replica in the window and
// merges them with this process's unflushed buckets (which replace the
// stored copy of the same tool, start and replica, so nothing is counted
// twice). Replicas and restarted processes therefore see the same figures.
//
// Windows are rounded out to whole buckets: a 1h query over one-minute
// buckets reads the bucket that holds now-1h, so it may count up to one
// bucket more than the hour.
//
// Small windows are exact. When the window holds at most Config.ExactRows
// (default 10,000) calls, the figures are computed from the execution rows
// themselves (store.ListExecutions) and the percentiles are exact; the
// report's source is then "rows". Otherwise they come from the merged
// sketches and the source is "sketch". A percentile q of n latencies is, in
// both cases, the nearest rank: the ceil(q·n)-th smallest latency (within
// the sketch's accuracy for "sketch"), which never puts p99 below a sample
// in the slowest 1% (NearestRank; the report names it in
// percentile_method).
//
// # Samples, refusals and dependency errors
//
// The latencies are those of the calls that sent at least one attempt
// (samples): a call toolgate refused before sending anything (validation,
// permission, rule, approval, quota, unknown tool, an open breaker) took no
// time at the dependency, so it is not a sample, and its failure is counted
// in refused and refused_codes, not in dependency_errors
// (monitor.ClassOf). A timeout is suggested only from MinSuggestAttempts
// (20) attempts on; before that the figures say "not enough data yet".
// Token totals saturate at 2^63-1 instead of wrapping.
//
// # The sketch
//
// Latencies are kept in a DDSketch (Masson, Rim and Lee, VLDB 2019) with
// relative accuracy RelativeAccuracy (1%): every percentile it returns is
// within 1% of the true latency at that rank. The index mapping, the part
// that carries the guarantee, is the logarithmic mapping of
// github.com/DataDog/sketches-go, the reference implementation (a test
// checks that our sketch answers exactly what sketches-go's DDSketch
// answers). The bins are a small store of our own: integer counts in
// contiguous bins, capped at MaxBins (2048), folding the lowest bins first,
// with a compact uvarint encoding. sketches-go's stores keep float64 counts
// and its encoding decodes each bin as a variable-length float; merging a
// day of one-minute buckets that way took 8 to 30 ms, against under 1 ms
// now (the encoded bins are added straight into the query's accumulator),
// so that reading the buckets from the store is most of a query.
//
// 2048 bins of 1% span a ratio of about 10^17, so the cap is never reached
// by latencies between a microsecond and an hour: it only bounds memory
// against pathological input (the low quantiles would then lose accuracy,
// never p50, p95 or p99 of real latencies). Sketches merge exactly: the
// merge of two buckets' sketches is the sketch of their union. A bucket's
// memory does not grow with its calls: about 5 KiB for latencies spread
// over 0.1 ms to 60 s (measured with a million of them), 16 KiB at most,
// plus the counters; stored, a bucket of a few hundred calls takes about
// 400 bytes.
//
// # Derived figures
//
// error_rate is the share of calls with ok=false (refusals included);
// refused_rate the share refused by toolgate; dependency_error_rate the
// share of the samples that failed at the dependency; retry_rate is the
// share of calls that needed more than one attempt.
// timeout_pressure is true when p95 >= 0.8 × the tool's read timeout.
// suggested_timeout_ms is the observed p99 plus 50% headroom, rounded up
// to the nearest 100 ms below 1 s, to the nearest 500 ms below 10 s, and
// to the nearest second above (SuggestTimeout).
//
// Calls of tools that do not exist (code unknown_tool) are counted under
// the name UnknownTool, so that a model inventing names cannot grow the
// figures without bound.
package stats
