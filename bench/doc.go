// Package bench holds toolgate's benchmark programs and their references.
//
//   - bench/load: the load comparison (direct, baseline proxy, toolgate read,
//     toolgate write) over HTTP on 127.0.0.1;
//   - bench/soak: the fault-injection soak (duplicates, lost rows, unsettled
//     unknowns), also run short by `make test`;
//   - bench/serveproc: builds and runs the real `toolgate serve` binary;
//   - this package's BenchmarkFailsafeReference: the no-op call of
//     pipeline.BenchmarkCall wrapped in failsafe-go's retry, circuit breaker
//     and timeout, the reference for the in-process pipeline's cost.
//
// cmd/toolgate-bench runs them all and writes BENCHMARKS.md.
package bench
