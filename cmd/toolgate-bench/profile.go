package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/toolgate/toolgate/bench/load"
)

// profileConcurrency is the number of callers under which the report
// profiles toolgate serve: the throughput targets' concurrency.
const profileConcurrency = 32

// profileLoad runs the load comparison once more, short and at
// profileConcurrency callers only, with Linux perf recording toolgate
// serve under the read and the write load, and keeps the top of each
// profile in data. Its figures are not the report's: profiling slows the
// server. Without perf it records a warning instead.
func profileLoad(ctx context.Context, data *reportData, lf *loadFlags, bin, dir string, quick bool, progress load.Progress) error {
	if _, err := exec.LookPath("perf"); err != nil {
		data.Warnings = append(data.Warnings, "no CPU profiles: Linux perf is not on PATH")
		return nil
	}
	o, err := lf.options(bin, dir, quick, progress)
	if err != nil {
		return err
	}
	o.Rounds, o.Concurrency, o.Duration, o.Warmup = 1, []int{profileConcurrency}, 5*time.Second, 500*time.Millisecond
	if quick {
		o.Duration = time.Second
	}
	prof, err := newProfiler(dir, o.Concurrency)
	if err != nil {
		return err
	}
	o.Around = prof.around
	if _, err := load.Run(ctx, o); err != nil {
		return fmt.Errorf("profiling: %w", err)
	}
	data.ProfileCommand = fmt.Sprintf("go run ./cmd/toolgate-bench load --rounds 1 --duration %s --warmup %s --concurrency %d --perf DIR",
		o.Duration, o.Warmup, profileConcurrency)
	data.Warnings = append(data.Warnings, prof.warn...)
	data.Profiles, err = prof.summaries()
	return err
}
