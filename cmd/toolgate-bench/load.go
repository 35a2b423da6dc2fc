package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/toolgate/toolgate/bench/load"
)

// loadFlags are the load comparison's flags, shared with report.
type loadFlags struct {
	rounds      *int
	duration    *time.Duration
	warmup      *time.Duration
	concurrency *string
	postgres    *string
}

func addLoadFlags(fs *flag.FlagSet) *loadFlags {
	return &loadFlags{
		rounds:      fs.Int("rounds", 3, "rounds; each takes every path at every concurrency, in a rotated order"),
		duration:    fs.Duration("duration", 3*time.Second, "length of each measured segment (one path at one concurrency in one round)"),
		warmup:      fs.Duration("warmup", time.Second, "unmeasured warm-up per path before the first round"),
		concurrency: fs.String("concurrency", "1,32", "numbers of concurrent callers"),
		postgres:    fs.String("postgres", os.Getenv("TOOLGATE_TEST_POSTGRES"), "also drive (e), the write tool on this PostgreSQL database (a fresh schema, dropped at the end), and count its cluster's CPU (the postmaster and its children, when on this machine: give it a cluster of its own); default $TOOLGATE_TEST_POSTGRES, which scripts/with-postgres.sh sets; empty: no (e)"),
	}
}

// options turns the flags into load.Options; quick shortens the run.
func (f *loadFlags) options(bin, dir string, quick bool, progress load.Progress) (load.Options, error) {
	conc, err := intList(*f.concurrency)
	if err != nil {
		return load.Options{}, err
	}
	o := load.Options{Binary: bin, Dir: dir, Concurrency: conc, Rounds: *f.rounds, Duration: *f.duration,
		Warmup: *f.warmup, Progress: progress, Postgres: *f.postgres}
	if quick {
		o.Rounds, o.Duration, o.Warmup = 2, time.Second, 500*time.Millisecond
	}
	self, err := os.Executable()
	if err != nil {
		return o, err
	}
	o.ProxyCommand = []string{self, "proxy"}
	return o, nil
}

func runLoad(ctx context.Context, args []string) error {
	fs := flagSet("load", "[--rounds N] [--duration D] [--concurrency 1,32] [--postgres URL] [--json FILE] [--perf DIR] [--quick]")
	lf := addLoadFlags(fs)
	quick := fs.Bool("quick", false, "a short run: 2 rounds of 1s segments")
	jsonPath := fs.String("json", "", "also write the figures as JSON to this file")
	perfDir := fs.String("perf", "", "record CPU profiles of the toolgate server (perf record) under the (c) and (d) loads at the highest concurrency, in the first round, into this directory")
	toolgatePath := fs.String("toolgate", "", "the toolgate binary to measure (default: go build ./cmd/toolgate)")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	if err := parse(fs, args); err != nil {
		return err
	}
	bin, cleanup, err := toolgateBinary(ctx, *toolgatePath)
	if err != nil {
		return err
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "toolgate-bench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	progress := newBar(os.Stderr, *noProgress)
	o, err := lf.options(bin, dir, *quick, progress)
	if err != nil {
		return err
	}
	var prof *profiler
	if *perfDir != "" {
		if prof, err = newProfiler(*perfDir, o.Concurrency); err != nil {
			return err
		}
		o.Around = prof.around
	}
	before := readLoadAvg()
	rep, err := load.Run(ctx, o)
	progress.Done()
	if err != nil {
		return err
	}
	after := readLoadAvg()
	rep.Print(os.Stdout)
	fmt.Printf("load average: %s at start, %s at end\n", before, after)
	if prof != nil {
		if err := prof.report(os.Stdout); err != nil {
			return err
		}
	}
	if *jsonPath != "" {
		return writeJSON(*jsonPath, map[string]any{"load": rep, "load_average": []string{before, after}})
	}
	return nil
}
