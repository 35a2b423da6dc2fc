package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/toolgate/toolgate/bench/soak"
)

// soakFlags are the soak's flags, shared with report.
type soakFlags struct {
	calls, operations, callers, runs *int
	readTimeout                      *time.Duration
	seed                             *uint64
	slow, unavailable, reset         *float64
}

func addSoakFlags(fs *flag.FlagSet) *soakFlags {
	return &soakFlags{
		calls:       fs.Int("calls", 10_000, "write calls in the soak's load phase"),
		operations:  fs.Int("operations", 0, "distinct operations the calls repeat (default calls/4)"),
		callers:     fs.Int("callers", 32, "concurrent callers"),
		runs:        fs.Int("runs", 0, "runs the operations are spread over (default: callers)"),
		readTimeout: fs.Duration("read-timeout", 200*time.Millisecond, "the write tools' read timeout; slow requests take twice as long"),
		seed:        fs.Uint64("seed", 1, "seed of the calls' order and the provider's fault draws"),
		slow:        fs.Float64("slow", 0.30, "share of provider requests slow past the read timeout (the refund is still made)"),
		unavailable: fs.Float64("unavailable", 0.05, "share of provider requests answered 503 (nothing done)"),
		reset:       fs.Float64("reset", 0.02, "share of provider requests whose connection is reset after reading (half before the refund, half after)"),
	}
}

func (f *soakFlags) options(bin, dir string, quick bool, progress soak.Progress) soak.Options {
	o := soak.Options{Binary: bin, Dir: dir, Calls: *f.calls, Operations: *f.operations, Callers: *f.callers,
		Runs: *f.runs, ReadTimeout: *f.readTimeout, Seed: *f.seed, Textbook: true, Progress: progress,
		Faults: soak.Faults{Slow: *f.slow, Unavailable: *f.unavailable, Reset: *f.reset}, NoDefaultFaults: true}
	if quick {
		o.Calls, o.Operations = 1000, 0
	}
	return o
}

func runSoak(ctx context.Context, args []string) error {
	fs := flagSet("soak", "[--calls N] [--callers N] [--read-timeout D] [--seed N] [--json FILE] [--keep] [--quick]")
	sf := addSoakFlags(fs)
	quick := fs.Bool("quick", false, "a short run: 1,000 calls")
	jsonPath := fs.String("json", "", "also write the figures as JSON to this file")
	keep := fs.Bool("keep", false, "keep the soak's directory (config, SQLite file) and print where it is")
	toolgatePath := fs.String("toolgate", "", "the toolgate binary to soak (default: go build ./cmd/toolgate)")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	if err := parse(fs, args); err != nil {
		return err
	}
	bin, cleanup, err := toolgateBinary(ctx, *toolgatePath)
	if err != nil {
		return err
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "toolgate-bench-soak-")
	if err != nil {
		return err
	}
	if *keep {
		defer fmt.Fprintln(os.Stderr, "soak directory kept:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	progress := newBar(os.Stderr, *noProgress)
	rep, err := soak.Run(ctx, sf.options(bin, dir, *quick, progress))
	progress.Done()
	if err != nil {
		return err
	}
	rep.Print(os.Stdout)
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, rep); err != nil {
			return err
		}
	}
	if !rep.OK() {
		return fmt.Errorf("the soak failed %d check(s)", len(rep.Failures))
	}
	return nil
}
