package main

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// The ledger check finds every way the rows can disagree with the answers:
// a lost row, a row of a failed call counted as a success, two rows on one
// operation key, rows of a run nobody used, a key shared across runs.
func TestCheckLedger(t *testing.T) {
	answered := map[string]int{"a": 3, "b": 2}
	fine := map[string]ledgerRows{"a": {Rows: 3, OKRows: 3, Keys: 3}, "b": {Rows: 2, OKRows: 2, Keys: 2}}
	with := func(run string, l ledgerRows) map[string]ledgerRows {
		m := map[string]ledgerRows{}
		for k, v := range fine {
			m[k] = v
		}
		m[run] = l
		return m
	}
	cases := []struct {
		name    string
		rows    map[string]ledgerRows
		dupKeys int
		want    []string
	}{
		{"every answer has its row", fine, 0, nil},
		{"a lost row", with("a", ledgerRows{Rows: 2, OKRows: 2, Keys: 2}), 0,
			[]string{"run a: 3 successful answers, 2 successful execution rows"}},
		{"a row too many", with("b", ledgerRows{Rows: 3, OKRows: 3, Keys: 3}), 0,
			[]string{"run b: 2 successful answers, 3 successful execution rows"}},
		{"a failed row next to the successes is no loss", with("b", ledgerRows{Rows: 3, OKRows: 2, Keys: 3}), 0, nil},
		{"two rows on one key", with("a", ledgerRows{Rows: 4, OKRows: 3, Keys: 3}), 0,
			[]string{"run a: 4 execution rows, 3 distinct operation keys"}},
		{"a run nobody used", with("c", ledgerRows{Rows: 1, OKRows: 1, Keys: 1}), 0,
			[]string{"run c: execution rows of a run no caller used"}},
		{"a run with no row at all", map[string]ledgerRows{"a": fine["a"]}, 0,
			[]string{"run b: 2 successful answers, 0 successful execution rows"}},
		{"a key on two runs", fine, 1, []string{"1 operation keys on more than one execution row"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkLedger(answered, c.rows, c.dupKeys); !slices.Equal(got, c.want) {
				t.Errorf("checkLedger = %q, want %q", got, c.want)
			}
		})
	}
}

// Phase 2 is judged per replica against the lone replica of phase 1, over
// every round, and the table says so.
func TestReplicasScalingAndTable(t *testing.T) {
	ms := time.Millisecond
	stats := []replicaStat{
		{Phase: 1, Round: 0, Replica: 1, OK: 100, Elapsed: time.Second, Latencies: []time.Duration{2 * ms, 1 * ms}},
		{Phase: 1, Round: 1, Replica: 1, OK: 300, Elapsed: time.Second, Latencies: []time.Duration{3 * ms}},
		{Phase: 2, Round: 0, Replica: 2, OK: 160, Errors: 1, Elapsed: 2 * time.Second, Latencies: []time.Duration{4 * ms}},
		{Phase: 2, Round: 0, Replica: 1, OK: 200, Elapsed: time.Second, Latencies: []time.Duration{5 * ms}},
	}
	rows := summariseReplicas(stats)
	// Phase 1: 400 calls in 2 s = 200/s. Phase 2: 200/s and 80/s.
	if len(rows) != 3 || rows[0].Rate != 200 || rows[1].Replica != 1 || rows[2].Rate != 80 || rows[2].Errors != 1 {
		t.Fatalf("summariseReplicas = %+v", rows)
	}
	if rows[0].P50 != 2*ms || rows[0].P99 != 3*ms {
		t.Errorf("phase 1 p50, p99 = %s, %s; want 2ms, 3ms (pooled over rounds)", rows[0].P50, rows[0].P99)
	}
	per, total := scaling(rows)
	if per != 0.7 || total != 1.4 {
		t.Errorf("scaling = %v, %v; want 0.7 (140/s per replica over 200/s), 1.4", per, total)
	}
	var b strings.Builder
	printReplicas(&b, rows, 2, []string{"run x: lost"})
	for _, want := range []string{
		"| 1: one replica alone | 1 | 2 | 200 | 2.00 ms | 3.00 ms | 0 |",
		"| 2: all replicas at once | 2 | 2 | 80 | 4.00 ms | 4.00 ms | 1 |",
		"| 2: total | all | | 280 |",
		"phase 2 / phase 1: 0.70x", "total, phase 2 / phase 1: 1.40x",
		"Ledger check FAILED (1 problems):\n- run x: lost",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// The machine's busy share comes from the "cpu" line of /proc/stat: idle
// and iowait are idle, guest time is not counted twice.
func TestParseCPULine(t *testing.T) {
	before := parseCPULine("cpu  100 0 100 700 100 0 0 0 50 0")
	after := parseCPULine("cpu  250 0 150 800 100 0 0 0 90 0")
	if before != (cpuTimes{total: 1000, idle: 800}) {
		t.Fatalf("parseCPULine = %+v", before)
	}
	if got := before.busyUntil(after); math.Abs(got-2.0/3) > 1e-9 {
		t.Errorf("busy = %v, want 2/3 (200 of 300 ticks)", got)
	}
	if got := parseCPULine("cpu0 1 2 3 4 5"); got != (cpuTimes{}) {
		t.Errorf("a per-core line parsed as %+v", got)
	}
}
