// Package bench holds toolgate's benchmark programs and their references.
//
//   - bench/load: the load comparison (direct, baseline proxy, toolgate read,
//     toolgate write) over HTTP on 127.0.0.1;
//   - bench/soak: the fault-injection soak (duplicates, lost rows, unsettled
//     unknowns), also run short by `make test`;
//   - bench/serveproc: builds and runs the real `toolgate serve` binary;
//   - this package's BenchmarkFailsafeReference: the no-op call of
//     pipeline.BenchmarkCall wrapped in failsafe-go's retry, circuit breaker
//     and timeout, the reference for the in-process pipeline's cost;
//   - this package's BenchmarkHistory: one call on a fresh SQLite file beside
//     one on a run at step 1,000,000 in a file of 10 million rows (seeded
//     once; TOOLGATE_BENCH_HISTORY_DB names a file to reuse);
//   - notes.md: what each missed target's profile says and what would close
//     it, shown beside the target in BENCHMARKS.md.
//
// cmd/toolgate-bench runs them all and writes BENCHMARKS.md.
package bench
