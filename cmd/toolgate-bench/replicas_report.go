package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/bench/load"
)

// replicaStat is what one replica's callers measured in one phase of one
// round of the replicas run.
type replicaStat struct {
	// Phase is 1 (one replica alone) or 2 (every replica at once).
	Phase   int
	Round   int
	Replica int
	// OK and Errors count the answered calls: a success, anything else.
	OK      int
	Errors  int
	Elapsed time.Duration
	// Latencies are the successful calls' times, unsorted.
	Latencies []time.Duration
	// Answered is, per run id, how many calls of that run were answered
	// with a success.
	Answered map[string]int
}

// rate is the replica's successful calls per second.
func (s replicaStat) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.OK) / s.Elapsed.Seconds()
}

// ledgerRows is what the database holds for one run: its execution rows,
// those of them that succeeded, and its distinct operation keys.
type ledgerRows struct {
	Rows, OKRows, Keys int
}

// checkLedger compares the answered calls with the database's rows: every
// successful answer must have exactly one successful execution row, every
// row its own operation key, and no run may hold rows of calls nobody
// sent. dupKeys counts operation keys found on more than one row across
// the whole schema. It returns what is wrong, nothing when all holds.
func checkLedger(answered map[string]int, rows map[string]ledgerRows, dupKeys int) []string {
	var bad []string
	runs := make([]string, 0, len(answered))
	for run := range answered {
		runs = append(runs, run)
	}
	slices.Sort(runs)
	for _, run := range runs {
		want, got := answered[run], rows[run]
		if got.OKRows != want {
			bad = append(bad, fmt.Sprintf("run %s: %d successful answers, %d successful execution rows", run, want, got.OKRows))
		}
		if got.Keys != got.Rows {
			bad = append(bad, fmt.Sprintf("run %s: %d execution rows, %d distinct operation keys", run, got.Rows, got.Keys))
		}
	}
	for run := range rows {
		if _, ok := answered[run]; !ok {
			bad = append(bad, fmt.Sprintf("run %s: execution rows of a run no caller used", run))
		}
	}
	if dupKeys > 0 {
		bad = append(bad, fmt.Sprintf("%d operation keys on more than one execution row", dupKeys))
	}
	return bad
}

// replicaSummary folds every round's stats into one row per (phase,
// replica): calls and time summed, latencies pooled.
type replicaSummary struct {
	Phase, Replica int
	OK, Errors     int
	Rate           float64
	P50, P99       time.Duration
}

func summariseReplicas(stats []replicaStat) []replicaSummary {
	type key struct{ phase, replica int }
	acc := map[key]*replicaStat{}
	var order []key
	for _, s := range stats {
		k := key{s.Phase, s.Replica}
		a, ok := acc[k]
		if !ok {
			a = &replicaStat{Phase: s.Phase, Replica: s.Replica}
			acc[k] = a
			order = append(order, k)
		}
		a.OK += s.OK
		a.Errors += s.Errors
		a.Elapsed += s.Elapsed
		a.Latencies = append(a.Latencies, s.Latencies...)
	}
	slices.SortFunc(order, func(a, b key) int {
		if a.phase != b.phase {
			return a.phase - b.phase
		}
		return a.replica - b.replica
	})
	out := make([]replicaSummary, 0, len(order))
	for _, k := range order {
		a := acc[k]
		slices.Sort(a.Latencies)
		out = append(out, replicaSummary{Phase: k.phase, Replica: k.replica, OK: a.OK, Errors: a.Errors,
			Rate: a.rate(), P50: load.Percentile(a.Latencies, 50), P99: load.Percentile(a.Latencies, 99)})
	}
	return out
}

// scaling is phase 2 against phase 1: the mean calls/s of one replica
// among all of them over the lone replica's (1.0 = no loss per replica),
// and the total over the lone replica's.
func scaling(rows []replicaSummary) (perReplica, total float64) {
	var alone, sum float64
	n := 0
	for _, r := range rows {
		switch r.Phase {
		case 1:
			alone += r.Rate
		case 2:
			sum += r.Rate
			n++
		}
	}
	if alone == 0 || n == 0 {
		return 0, 0
	}
	return sum / float64(n) / alone, sum / alone
}

// printReplicas writes the run's markdown table, its ratios and the
// ledger check.
func printReplicas(w io.Writer, rows []replicaSummary, callers int, problems []string) {
	fmt.Fprintf(w, "| phase | replica | callers | calls/s | p50 | p99 | errors |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|\n")
	var total [3]float64
	for _, r := range rows {
		phase := "1: one replica alone"
		if r.Phase == 2 {
			phase = "2: all replicas at once"
		}
		total[r.Phase] += r.Rate
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %d |\n", phase, r.Replica, callers,
			group(r.Rate, 0), fmtMS(r.P50), fmtMS(r.P99), r.Errors)
	}
	per, tot := scaling(rows)
	fmt.Fprintf(w, "| 2: total | all | | %s | | | |\n\n", group(total[2], 0))
	fmt.Fprintf(w, "Per replica, phase 2 / phase 1: %.2fx (1.00x = no loss per replica); total, phase 2 / phase 1: %.2fx.\n\n", per, tot)
	if len(problems) == 0 {
		answers := 0
		for _, r := range rows {
			answers += r.OK
		}
		fmt.Fprintf(w, "Ledger check: each of the %s successful answers has exactly one execution row; no operation key appears twice.\n", group(float64(answers), 0))
		return
	}
	fmt.Fprintf(w, "Ledger check FAILED (%d problems):\n", len(problems))
	for _, p := range problems {
		fmt.Fprintf(w, "- %s\n", p)
	}
}

func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// cpuTimes are the machine's CPU counters (the "cpu" line of /proc/stat,
// in clock ticks): all of them, and the idle ones (idle and iowait).
type cpuTimes struct{ total, idle uint64 }

// parseCPULine reads the "cpu ..." line of /proc/stat; anything else is
// zero.
func parseCPULine(line string) cpuTimes {
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		t.total += v
		if i == 3 || i == 4 {
			t.idle += v
		}
	}
	return t
}

// busyUntil is the fraction of the machine's CPU time that was busy
// between t and later (0 when unknown).
func (t cpuTimes) busyUntil(later cpuTimes) float64 {
	if later.total <= t.total {
		return 0
	}
	return 1 - float64(later.idle-t.idle)/float64(later.total-t.total)
}
