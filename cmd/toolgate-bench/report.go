package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/bench/load"
	"github.com/toolgate/toolgate/bench/soak"
)

func init() {
	register("report", "run the load comparison, the soak and the Go benchmarks; write BENCHMARKS.md and BENCHMARKS.json", runReport)
}

// reportData is everything one report measured; BENCHMARKS.json holds it.
type reportData struct {
	Command     string        `json:"command"`
	Quick       bool          `json:"quick"`
	Machine     machine       `json:"machine"`
	Targets     []target      `json:"targets"`
	LoadCommand string        `json:"load_command"`
	Load        *load.Report  `json:"load"`
	SoakCommand string        `json:"soak_command"`
	Soak        *soak.Report  `json:"soak"`
	GoBench     []*goBenchRun `json:"go_bench"`
	Seconds     float64       `json:"seconds"`
}

// goBenchRun is one `go test -bench` of the report and its figures.
type goBenchRun struct {
	Command string         `json:"command"`
	Why     string         `json:"why"`
	Results []*benchResult `json:"results"`
}

// goBenches are the Go benchmarks of the report.
func goBenches(quick bool) []goBench {
	n := func(full int) int {
		if quick {
			return 1
		}
		return full
	}
	return []goBench{
		{Pkg: "./pipeline/", Pattern: "^BenchmarkCall$", Count: n(5), Mem: true,
			Why: "the in-process pipeline, one call: a Go-function tool on the memory store (read: no ledger; write: ledger, row and state commit)"},
		{Pkg: "./bench/", Pattern: "^BenchmarkFailsafeReference$", Count: n(5), Mem: true,
			Why: "the reference: the same no-op call in failsafe-go retry + circuit breaker + timeout"},
		{Pkg: "./validate/", Pattern: "^BenchmarkCheck$", Count: n(3), Mem: true,
			Why: "validation alone"},
		{Pkg: "./pipeline/", Pattern: "^BenchmarkRecordedCalls$", Count: n(3),
			Why: "recorded write calls per second, whole pipeline with the store, 1/8/64 callers (PostgreSQL only with TOOLGATE_TEST_POSTGRES)"},
		{Pkg: "./store/sqlite/", Pattern: "^BenchmarkCommit$", Count: n(3),
			Why: "the SQLite store's commit alone (execution row, operation, state), 1/8/64 committers"},
		{Pkg: "./monitor/stats/", Pattern: "^BenchmarkQueryMillionCalls$", Count: n(3), Benchtime: "20x",
			Why: "the stats query behind /v1/stats over 1,000,000 recorded calls (a day of one-minute buckets on SQLite)"},
	}
}

func runReport(ctx context.Context, args []string) error {
	fs := flagSet("report", "[--out BENCHMARKS.md] [--json BENCHMARKS.json] [--quick]")
	lf := addLoadFlags(fs)
	sf := addSoakFlags(fs)
	quick := fs.Bool("quick", false, "a short run (about 2 minutes): 2 load rounds of 1s, a 1,000-call soak, -count 1")
	out := fs.String("out", "BENCHMARKS.md", "the Markdown report to write (relative to the module's root)")
	jsonOut := fs.String("json", "BENCHMARKS.json", "the JSON figures to write (relative to the module's root; empty: none)")
	toolgatePath := fs.String("toolgate", "", "the toolgate binary to measure (default: go build ./cmd/toolgate)")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	if err := parse(fs, args); err != nil {
		return err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	data := &reportData{Command: strings.TrimSpace("go run ./cmd/toolgate-bench report " + strings.Join(args, " ")), Quick: *quick}
	data.Machine = describeMachine(ctx)
	data.Machine.LoadAtStart = readLoadAvg()
	progress := newBar(os.Stderr, *noProgress)
	defer progress.Done()

	bin, cleanup, err := toolgateBinary(ctx, *toolgatePath)
	if err != nil {
		return err
	}
	defer cleanup()
	work, err := os.MkdirTemp("", "toolgate-bench-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// 1. The load comparison, first, on the freshest machine.
	lo, err := lf.options(bin, mkdir(work, "load"), *quick, progress)
	if err != nil {
		return err
	}
	data.LoadCommand = loadCommand(lo)
	if data.Load, err = load.Run(ctx, lo); err != nil {
		return err
	}

	// 2. The Go benchmarks.
	if data.GoBench, err = runGoBenches(ctx, root, *quick, progress); err != nil {
		return err
	}

	// 3. The soak.
	so := sf.options(bin, mkdir(work, "soak"), *quick, progress)
	data.SoakCommand = soakCommand(so)
	if data.Soak, err = soak.Run(ctx, so); err != nil {
		return err
	}
	progress.Done()

	data.Machine.LoadAtEnd = readLoadAvg()
	data.Seconds = time.Since(began).Seconds()
	data.Targets = evaluate(data)

	if err := writeReport(root, *out, *jsonOut, data); err != nil {
		return err
	}
	data.Load.Print(os.Stdout)
	data.Soak.Print(os.Stdout)
	printTargets(os.Stdout, data.Targets)
	fmt.Printf("load average: %s at start, %s at end; %.0fs in all\n", data.Machine.LoadAtStart, data.Machine.LoadAtEnd, data.Seconds)
	fmt.Printf("wrote %s\n", inRoot(root, *out))
	return nil
}

// runGoBenches runs the Go benchmarks of the report (fewer when quick) in
// the module at root, one progress step each.
func runGoBenches(ctx context.Context, root string, quick bool, progress *bar) ([]*goBenchRun, error) {
	var runs []*goBenchRun
	benches := goBenches(quick)
	progress.Phase("go test -bench", len(benches))
	for _, b := range benches {
		res, _, err := runGoBench(ctx, root, b)
		if err != nil {
			return nil, err
		}
		runs = append(runs, &goBenchRun{Command: b.Command(), Why: b.Why, Results: res})
		progress.Add(1)
	}
	return runs, nil
}

// writeReport writes data as Markdown to out and, unless jsonOut is "", as
// JSON to jsonOut, both relative to the module's root.
func writeReport(root, out, jsonOut string, data *reportData) error {
	md := markdown(data)
	if err := os.WriteFile(inRoot(root, out), []byte(md), 0o644); err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeJSON(inRoot(root, jsonOut), data); err != nil {
			return err
		}
	}
	return nil
}

// inRoot is path, relative to the module's root unless absolute.
func inRoot(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

func mkdir(parent, name string) string {
	dir := filepath.Join(parent, name)
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// loadCommand is the stand-alone command that repeats the report's load
// comparison.
func loadCommand(o load.Options) string {
	conc := make([]string, len(o.Concurrency))
	for i, c := range o.Concurrency {
		conc[i] = fmt.Sprint(c)
	}
	return fmt.Sprintf("go run ./cmd/toolgate-bench load --rounds %d --duration %s --warmup %s --concurrency %s",
		o.Rounds, o.Duration, o.Warmup, strings.Join(conc, ","))
}

// soakCommand is the stand-alone command that repeats the report's soak.
func soakCommand(o soak.Options) string {
	c := fmt.Sprintf("go run ./cmd/toolgate-bench soak --calls %d --callers %d --read-timeout %s --seed %d",
		o.Calls, o.Callers, o.ReadTimeout, o.Seed)
	if o.Operations > 0 {
		c += fmt.Sprintf(" --operations %d", o.Operations)
	}
	if o.Runs > 0 {
		c += fmt.Sprintf(" --runs %d", o.Runs)
	}
	if f := o.Faults; f != (soak.Faults{Slow: 0.30, Unavailable: 0.05, Reset: 0.02}) {
		c += fmt.Sprintf(" --slow %g --unavailable %g --reset %g", f.Slow, f.Unavailable, f.Reset)
	}
	return c
}
