package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/bench/load"
	"github.com/toolgate/toolgate/bench/soak"
)

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
	// Fsync is the disk's flush time, beside the load's SQLite file.
	Fsync *fsyncFigures `json:"fsync"`
	// ProfileCommand is the load run under perf; Profiles what it found.
	ProfileCommand string            `json:"profile_command,omitempty"`
	Profiles       []*profileSummary `json:"profiles,omitempty"`
	// Warnings are what the report could not measure, and why.
	Warnings []string `json:"warnings,omitempty"`
	// Faults is the recorded fault run (bench/faults.json), when there
	// is one; it is read afresh, not kept in the report's JSON.
	Faults *faultsFigures `json:"-"`
	// Skipped are the phases --skip left out.
	Skipped []string `json:"skipped,omitempty"`
	Seconds float64  `json:"seconds"`

	notes map[string]string
}

// goBenchRun is one `go test -bench` of the report and its figures.
type goBenchRun struct {
	Command string         `json:"command"`
	Why     string         `json:"why"`
	Results []*benchResult `json:"results"`
}

// goBenches are the Go benchmarks of the report; historyDB is the seeded
// file of BenchmarkHistory ("" for a temporary one).
func goBenches(quick bool, historyDB string) []goBench {
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
		{Pkg: "./bench/", Pattern: "^BenchmarkHistory$", Count: n(6), Benchtime: historyBenchtime(quick), Interleave: true,
			Env: []string{historyEnv + "=" + historyDB},
			Why: "one call at one caller on SQLite, on a fresh file and on a run at step 1,000,000 in a file of 10 million execution rows and operations (seeded once into " + historyDB + ")"},
		{Pkg: "./store/sqlite/", Pattern: "^BenchmarkCommit$", Count: n(3),
			Why: "the SQLite store's commit alone (execution row, operation, state), 1/8/64 committers"},
		{Pkg: "./monitor/stats/", Pattern: "^BenchmarkQueryMillionCalls$", Count: n(3), Benchtime: "20x",
			Why: "the stats query behind /v1/stats over 1,000,000 recorded calls (a day of one-minute buckets on SQLite)"},
	}
}

// historyEnv names BenchmarkHistory's seeded file (bench/history_test.go).
const historyEnv = "TOOLGATE_BENCH_HISTORY_DB"

func historyBenchtime(quick bool) string {
	if quick {
		return "300ms"
	}
	return "1s"
}

// defaultHistoryDB is where BenchmarkHistory's seeded file is kept across
// reports: the user's cache directory.
func defaultHistoryDB() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolgate-bench", "history-10000000.db")
}

// runReport is toolgate-bench report: the load comparison, the fsync, the
// profiles, the Go benchmarks and the soak, measured in that order (those
// --skip leaves), judged against the targets and written to BENCHMARKS.md
// and BENCHMARKS.json.
func runReport(ctx context.Context, args []string) error {
	fs := flagSet("report", "[--out BENCHMARKS.md] [--json BENCHMARKS.json] [--quick] [--skip PHASES] [--benches LIST]")
	lf := addLoadFlags(fs)
	sf := addSoakFlags(fs)
	quick := fs.Bool("quick", false, "a short run (about 2 minutes): 2 load rounds of 1s, a 1,000-call soak, -count 1")
	out := fs.String("out", "BENCHMARKS.md", "the Markdown report to write (relative to the module's root)")
	jsonOut := fs.String("json", "BENCHMARKS.json", "the JSON figures to write (relative to the module's root; empty: none)")
	toolgatePath := fs.String("toolgate", "", "the toolgate binary to measure (default: go build ./cmd/toolgate)")
	noProgress := fs.Bool("no-progress", false, "no progress bar")
	skipList := fs.String("skip", "", "phases to leave out, comma-separated: load, fsync, profile, bench, soak (their targets show \"not measured\")")
	benchList := fs.String("benches", "", "run only the Go benchmarks whose pattern holds one of these comma-separated words (e.g. History,Call)")
	historyDB := fs.String("history-db", defaultHistoryDB(), "BenchmarkHistory's seeded SQLite file: reused when present, else seeded (minutes); empty: a temporary one")
	if err := parse(fs, args); err != nil {
		return err
	}
	skip, err := phaseSet(*skipList)
	if err != nil {
		return err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	data, err := newReportData(ctx, root, args, *quick, skip)
	if err != nil {
		return err
	}
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

	run := &reportRun{data: data, skip: skip, lf: lf, sf: sf, bin: bin, work: work, root: root, quick: *quick,
		historyDB: *historyDB, benches: *benchList, progress: progress}
	if err := run.measure(ctx); err != nil {
		return err
	}
	progress.Done()

	data.Machine.LoadAtEnd = readLoadAvg()
	data.Seconds = time.Since(began).Seconds()
	data.Targets = evaluate(data)

	if err := writeReport(root, *out, *jsonOut, data); err != nil {
		return err
	}
	printSummary(data)
	fmt.Printf("wrote %s\n", inRoot(root, *out))
	return nil
}

// newReportData starts the report the command line args describe: its
// command, the notes and the recorded fault run found under root, the
// phases skip leaves out, and the machine as it is before the first one.
func newReportData(ctx context.Context, root string, args []string, quick bool, skip map[string]bool) (*reportData, error) {
	data := &reportData{Command: strings.TrimSpace("go run ./cmd/toolgate-bench report " + strings.Join(args, " ")), Quick: quick}
	var err error
	if data.notes, err = readNotes(root); err != nil {
		return nil, err
	}
	if data.Faults, err = readFaults(root); err != nil {
		return nil, err
	}
	for _, ph := range phases {
		if skip[ph] {
			data.Skipped = append(data.Skipped, ph)
		}
	}
	data.Machine = describeMachine(ctx)
	data.Machine.LoadAtStart = readLoadAvg()
	return data, nil
}

// runGoBenches runs the Go benchmarks in the module at root, one
// progress step each.
func runGoBenches(ctx context.Context, root string, benches []goBench, progress *bar) ([]*goBenchRun, error) {
	var runs []*goBenchRun
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

// selectBenches keeps the benchmarks whose pattern holds one of the
// comma-separated words of list (all of them when list is empty).
func selectBenches(benches []goBench, list string) []goBench {
	if list == "" {
		return benches
	}
	var out []goBench
	for _, b := range benches {
		for _, w := range strings.Split(list, ",") {
			if w = strings.TrimSpace(w); w != "" && strings.Contains(b.Pattern, w) {
				out = append(out, b)
				break
			}
		}
	}
	return out
}

// phases are the report's phases, in order, as --skip names them.
var phases = []string{"load", "fsync", "profile", "bench", "soak"}

// phaseSet parses --skip.
func phaseSet(list string) (map[string]bool, error) {
	set := map[string]bool{}
	if list == "" {
		return set, nil
	}
	for _, ph := range strings.Split(list, ",") {
		ph = strings.TrimSpace(ph)
		if !slices.Contains(phases, ph) {
			return nil, fmt.Errorf("%w: --skip %q: no phase %q (phases: %s)", errUsage, list, ph, strings.Join(phases, ", "))
		}
		set[ph] = true
	}
	return set, nil
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
	c := fmt.Sprintf("go run ./cmd/toolgate-bench load --rounds %d --duration %s --warmup %s --concurrency %s",
		o.Rounds, o.Duration, o.Warmup, strings.Join(conc, ","))
	if o.Postgres != "" {
		// --postgres defaults to the cluster the script starts.
		c = "scripts/with-postgres.sh " + c
	}
	return c
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

// reportRun is one report's measuring: what runReport's flags chose.
type reportRun struct {
	data               *reportData
	skip               map[string]bool
	lf                 *loadFlags
	sf                 *soakFlags
	bin, work, root    string
	quick              bool
	historyDB, benches string
	progress           *bar
}

// measure runs the report's phases, those --skip leaves, in order.
func (r *reportRun) measure(ctx context.Context) error {
	var err error
	// 1. The load comparison, first, on the freshest machine; then the
	// disk's fsync where it kept its SQLite file, and CPU profiles of the
	// server under the same load.
	loadDir := mkdir(r.work, "load")
	if !r.skip["load"] {
		lo, err := r.lf.options(r.bin, loadDir, r.quick, r.progress)
		if err != nil {
			return err
		}
		r.data.LoadCommand = loadCommand(lo)
		if r.data.Load, err = load.Run(ctx, lo); err != nil {
			return err
		}
	}
	if !r.skip["fsync"] {
		if r.data.Fsync, err = measureFsync(ctx, loadDir, 3000); err != nil {
			return err
		}
	}
	if !r.skip["profile"] {
		if err := profileLoad(ctx, r.data, r.lf, r.bin, mkdir(r.work, "profile"), r.quick, r.progress); err != nil {
			return err
		}
	}

	// 2. The Go benchmarks.
	if !r.skip["bench"] {
		benches := selectBenches(goBenches(r.quick, r.historyDB), r.benches)
		if r.data.GoBench, err = runGoBenches(ctx, r.root, benches, r.progress); err != nil {
			return err
		}
	}

	// 3. The soak.
	if !r.skip["soak"] {
		so := r.sf.options(r.bin, mkdir(r.work, "soak"), r.quick, r.progress)
		r.data.SoakCommand = soakCommand(so)
		if r.data.Soak, err = soak.Run(ctx, so); err != nil {
			return err
		}
	}
	return nil
}

// printSummary prints the report's figures and targets on stdout.
func printSummary(data *reportData) {
	if data.Load != nil {
		data.Load.Print(os.Stdout)
	}
	if data.Soak != nil {
		data.Soak.Print(os.Stdout)
	}
	if f := data.Fsync; f != nil {
		fmt.Printf("fsync of 4 KiB in %s: p50 %s, p90 %s, p99 %s (%d syncs)\n", f.Dir, fmtUS(f.P50us), fmtUS(f.P90us), fmtUS(f.P99us), f.Syncs)
	}
	for _, w := range data.Warnings {
		fmt.Println("warning:", w)
	}
	printTargets(os.Stdout, data.Targets)
	fmt.Printf("load average: %s at start, %s at end; %.0fs in all\n", data.Machine.LoadAtStart, data.Machine.LoadAtEnd, data.Seconds)
}
