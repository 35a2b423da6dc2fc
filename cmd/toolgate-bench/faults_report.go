package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
)

// faultsFile is where `toolgate-bench faults --record` keeps the figures of
// the documented long run; report and render print them in BENCHMARKS.md.
const faultsFile = "bench/faults.json"

// faultsFigures are one fault run's figures, as BENCHMARKS.md shows them.
type faultsFigures struct {
	Command  string         `json:"command"`
	Machine  machine        `json:"machine"`
	Seed     uint64         `json:"seed"`
	Seconds  float64        `json:"seconds"`
	Faults   int            `json:"faults"`
	ByKind   map[string]int `json:"faults_by_kind"`
	Calls    int            `json:"calls"`
	Answered int            `json:"answered"`
	Codes    map[string]int `json:"codes"`
	Effects  int            `json:"effects"`
	Ledger   int            `json:"ledger_operations"`
	// The promises: each must be 0.
	Duplicates      int `json:"duplicates"`
	Lost            int `json:"lost_effects"`
	MissingRows     int `json:"missing_rows"`
	Unsettled       int `json:"unsettled_after_reconcile"`
	BadAnswers      int `json:"bad_answers"`
	StateMismatches int `json:"state_or_replay_mismatches"`
	OverBudget      int `json:"answers_over_budget"`
	LateInFlight    int `json:"late_duplicate_in_flight"`
	Violations      int `json:"violations"`
	// Context.
	Reconciled      int     `json:"reconcile_settled"`
	UnknownUnmade   int     `json:"unknown_never_made"`
	WorstRecoveryMS float64 `json:"worst_recovery_ms"`
	WorstOverMS     float64 `json:"worst_over_budget_ms"`
}

// figuresOf turns a fault run's result into its figures.
func figuresOf(command string, m machine, seed uint64, res *faultcheck.Result) *faultsFigures {
	f := &faultsFigures{Command: command, Machine: m, Seed: seed, Seconds: res.Took.Seconds(), Faults: len(res.Faults),
		ByKind: map[string]int{}, Calls: res.Calls, Answered: res.Answered, Codes: map[string]int{},
		Effects: res.Effects, Ledger: res.LedgerOps, Duplicates: res.Duplicates, Lost: res.Lost, MissingRows: res.MissingRows,
		Unsettled: res.Unsettled, BadAnswers: res.BadAnswers, StateMismatches: res.StateMismatches, OverBudget: res.OverBudget,
		LateInFlight: res.LateInFlight, Violations: len(res.Violations), Reconciled: res.Reconciled, UnknownUnmade: res.UnknownUnmade,
		WorstRecoveryMS: ms(res.WorstRecovery), WorstOverMS: ms(max(res.WorstOver, 0))}
	for _, x := range res.Faults {
		f.ByKind[x.Name]++
	}
	for c, n := range res.Codes {
		f.Codes[string(c)] = n
	}
	return f
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// readFaults reads the recorded long run, nil when there is none.
func readFaults(root string) (*faultsFigures, error) {
	b, err := os.ReadFile(inRoot(root, faultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f := &faultsFigures{}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("%s: %w", faultsFile, err)
	}
	return f, nil
}

// writeFaults is BENCHMARKS.md's section of the recorded fault run.
func writeFaults(b *strings.Builder, f *faultsFigures) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m := f.Machine
	p("\n## Fault run\n\n```sh\n%s\n```\n\n", f.Command)
	p("Recorded on %s (commit %s; %s, %d cores; load average %s at start, %s at end) in %s.\n", m.Date, m.Commit, m.CPU, m.Cores,
		m.LoadAtStart, m.LoadAtEnd, time.Duration(f.Seconds*float64(time.Second)).Round(time.Second))
	p("docs/reliability.md says what each fault is and what toolgate promises under it.\n")
	p("`toolgate serve` on SQLite, a fake payment provider behind a fault proxy, a steady load of distinct writes,\n")
	p("repeats and reads; faults drawn from the seed, each after 0.5-3 s of quiet and on for 0.3-6 s; after each, new\n")
	p("writes until one succeeds; at the end `toolgate reconcile` beside the server and the whole-history check.\n\n")
	p("| | |\n|---|---:|\n")
	p("| faults injected | %s |\n", group(float64(f.Faults), 0))
	for _, kind := range sortedKeys(f.ByKind) {
		p("| - %s | %s |\n", kind, group(float64(f.ByKind[kind]), 0))
	}
	p("| calls (all answered: %s) | %s |\n", group(float64(f.Answered), 0), group(float64(f.Calls), 0))
	for _, code := range sortedKeys(f.Codes) {
		p("| - %s | %s |\n", code, group(float64(f.Codes[code]), 0))
	}
	p("| refunds made / operations in the ledger | %s / %s |\n", group(float64(f.Effects), 0), group(float64(f.Ledger), 0))
	p("| **duplicates** | **%d** |\n| **lost rows** (refunds the ledger does not know, answers with an effect and no row) | **%d** (%d, %d) |\n",
		f.Duplicates, f.Lost+f.MissingRows, f.Lost, f.MissingRows)
	p("| **unsettled after reconcile** | **%d** (reconcile settled %d; unknown and never made %d) |\n", f.Unsettled, f.Reconciled, f.UnknownUnmade)
	p("| no answer, HTTP 500 or internal_error / state or replay mismatch / late duplicate_in_flight | %d / %d / %d |\n",
		f.BadAnswers, f.StateMismatches, f.LateInFlight)
	p("| worst recovery after a fault's end (limit 5 s) | %.0f ms |\n", f.WorstRecoveryMS)
	p("| worst answer past its budget (limit 2 s) / answers past the limit | %.0f ms / %d |\n\n", f.WorstOverMS, f.OverBudget)
	if f.Violations == 0 {
		p("Every check passed.\n")
	} else {
		p("**%d promise(s) broken**: see the run's output.\n", f.Violations)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
