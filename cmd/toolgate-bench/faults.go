package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
	"github.com/toolgate/toolgate/internal/faultproxy"
)

// faultsFlags are the flags of toolgate-bench faults.
type faultsFlags struct {
	seed     uint64
	duration time.Duration
	callers  int
	store    string
	binary   string
	keep     bool
	diskFull bool
	record   bool
}

func runFaults(ctx context.Context, args []string) error {
	fs := flagSet("faults", "[--seed N] [--duration D] [--callers N] [--store sqlite|postgres://...] [--disk-full] [--record] [--toolgate BIN] [--keep]")
	var f faultsFlags
	fs.Uint64Var(&f.seed, "seed", uint64(time.Now().UnixNano()), "seed of the faults and their timing (default: the time; printed first)")
	fs.DurationVar(&f.duration, "duration", 30*time.Second, "how long to keep injecting faults")
	fs.IntVar(&f.callers, "callers", 8, "concurrent callers of the steady load")
	fs.StringVar(&f.store, "store", "sqlite", `"sqlite" (a new file) or the URL of an empty PostgreSQL database, reached through a fault proxy of its own`)
	fs.StringVar(&f.binary, "toolgate", "", "the toolgate binary (default: go build ./cmd/toolgate)")
	fs.BoolVar(&f.keep, "keep", false, "keep the run's directory (config, SQLite file) and print where it is")
	fs.BoolVar(&f.record, "record", false, "write the figures to "+faultsFile+" (shown in BENCHMARKS.md by report and render)")
	fs.BoolVar(&f.diskFull, "disk-full", false, "with the SQLite store: put its file on a 2 GB tmpfs mounted for the run (needs root) and fill it among the faults")
	if err := parse(fs, args); err != nil {
		return err
	}
	return faultsRun(ctx, f, os.Stdout)
}

// faultsRun runs one randomised fault run and prints its figures to w;
// it fails when a promise was broken.
func faultsRun(ctx context.Context, f faultsFlags, w io.Writer) error {
	fmt.Fprintf(w, "seed %d (toolgate-bench faults --seed %d --duration %s repeats these faults and their timing)\n", f.seed, f.seed, f.duration)
	var m machine
	if f.record {
		m = describeMachine(ctx)
		m.LoadAtStart = readLoadAvg()
	}
	bin, cleanup, err := toolgateBinary(ctx, f.binary)
	if err != nil {
		return err
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "toolgate-bench-faults-")
	if err != nil {
		return err
	}
	if f.keep {
		defer fmt.Fprintln(os.Stderr, "faults directory kept:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	store, extra, closeStore, err := faultStore(f, dir)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := faultcheck.Run(ctx, faultcheck.Options{Binary: bin, Dir: dir, Store: store, Callers: f.callers,
		Duration: f.duration, Progress: w,
		Schedule: func(p *faultproxy.Proxy) func(int) *faultcheck.Fault {
			return faultcheck.RandomSchedule(f.seed, p, extra...)
		}})
	if err != nil {
		return err
	}
	printFaults(w, f.seed, res)
	if f.record {
		if err := recordFaults(ctx, f, m, res); err != nil {
			return err
		}
	}
	if res.Failed() {
		return fmt.Errorf("seed %d: %d promise(s) broken (first: %s)", f.seed, len(res.Violations), res.Violations[0])
	}
	return nil
}

// faultStore is the store URL the run's server uses ("" for its default
// SQLite file in dir) and the faults it adds to the schedule: PostgreSQL
// behind a fault proxy (--store), or SQLite on a small file system that
// fills up (--disk-full). closeStore undoes what it set up.
func faultStore(f faultsFlags, dir string) (store string, extra []faultcheck.Maker, closeStore func(), err error) {
	if f.store != "sqlite" {
		proxied, pgFaults, closeProxy, err := postgresFaults(f.store)
		if err != nil {
			return "", nil, nil, err
		}
		if f.diskFull {
			closeProxy()
			return "", nil, nil, fmt.Errorf("%w: --disk-full needs --store sqlite", errUsage)
		}
		return proxied, pgFaults, closeProxy, nil
	}
	if !f.diskFull {
		return "", nil, func() {}, nil
	}
	small, unmount, err := mountSmall(dir)
	if err != nil {
		return "", nil, nil, err
	}
	return "sqlite:" + filepath.Join(small, "toolgate.db"), []faultcheck.Maker{faultcheck.DiskFull(small)}, unmount, nil
}

// recordFaults writes the run's figures to faultsFile, with the machine as
// it was at the start and its load average now.
func recordFaults(ctx context.Context, f faultsFlags, m machine, res *faultcheck.Result) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	m.LoadAtEnd = readLoadAvg()
	command := fmt.Sprintf("go run ./cmd/toolgate-bench faults --seed %d --duration %s", f.seed, f.duration)
	if f.diskFull {
		command += " --disk-full"
	}
	return writeJSON(inRoot(root, faultsFile), figuresOf(command+" --record", m, f.seed, res))
}

// mountSmall mounts a 2 GB tmpfs under dir for the SQLite store, so that
// a disk-full fault fills it in a second or two, not the machine's disk.
func mountSmall(dir string) (string, func(), error) {
	small := filepath.Join(dir, "small")
	if err := os.Mkdir(small, 0o700); err != nil {
		return "", nil, err
	}
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=2g"); err != nil {
		return "", nil, fmt.Errorf("--disk-full: mount a tmpfs at %s: %w (it needs root)", small, err)
	}
	return small, func() { _ = syscall.Unmount(small, 0) }, nil
}

// printFaults prints a fault run's figures.
func printFaults(w io.Writer, seed uint64, res *faultcheck.Result) {
	kinds := map[string]int{}
	for _, f := range res.Faults {
		kinds[f.Name]++
	}
	fmt.Fprintf(w, "\nseed %d, %s\n", seed, res.Took.Round(time.Second))
	fmt.Fprintf(w, "faults injected:          %d (%s)\n", len(res.Faults), countList(kinds))
	codes := map[string]int{}
	for c, n := range res.Codes {
		codes[string(c)] = n
	}
	fmt.Fprintf(w, "calls:                    %d, %d answered (%s)\n", res.Calls, res.Answered, countList(codes))
	fmt.Fprintf(w, "provider effects:         %d, ledger operations %d\n", res.Effects, res.LedgerOps)
	fmt.Fprintf(w, "duplicates:               %d\n", res.Duplicates)
	fmt.Fprintf(w, "lost rows:                %d (effects the ledger does not know: %d, answers with an effect and no row: %d)\n",
		res.Lost+res.MissingRows, res.Lost, res.MissingRows)
	fmt.Fprintf(w, "unsettled after reconcile: %d (reconcile settled %d; unknown and never made: %d)\n", res.Unsettled, res.Reconciled, res.UnknownUnmade)
	fmt.Fprintf(w, "bad answers:              %d (no answer, HTTP 500, internal_error)\n", res.BadAnswers)
	fmt.Fprintf(w, "state or replay mismatch: %d\n", res.StateMismatches)
	fmt.Fprintf(w, "worst recovery:           %s (limit %s)\n", res.WorstRecovery.Round(time.Millisecond), faultcheck.RecoveryLimit)
	fmt.Fprintf(w, "worst answer over budget: %s (limit %s; answers past it: %d)\n", max(res.WorstOver, 0).Round(time.Millisecond), faultcheck.Slack, res.OverBudget)
	fmt.Fprintf(w, "duplicate_in_flight late: %d\n", res.LateInFlight)
	fmt.Fprintf(w, "violations:               %d\n", len(res.Violations))
	for _, v := range res.Violations {
		fmt.Fprintln(w, "  -", v)
	}
}

// countList is "a 3, b 1", by name.
func countList(m map[string]int) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}
