package main

import (
	"testing"

	"github.com/toolgate/toolgate/bench/load"
)

// The goals are judged against floors of the same run: the proxy's added
// p50 (plus two fsyncs for a write), the proxy's throughput, SQLite for
// PostgreSQL, the fresh store for the seeded one, failsafe-go for the
// pipeline.
func TestEvaluateAgainstTheRunsFloors(t *testing.T) {
	bench := func(name, unit string, v float64) *benchResult {
		return &benchResult{Name: name, Median: map[string]float64{unit: v}, Values: map[string][]float64{unit: {v}}}
	}
	d := &reportData{
		Load: &load.Report{
			Results: []*load.Result{{Path: load.Proxy, Concurrency: 32, Throughput: 10000}},
			Ratios: []load.Ratios{
				{Concurrency: 1, ProxyAddedP50us: 150, ReadAddedP50us: 260, WriteAddedP50us: 1100},
				{Concurrency: 32, ReadVsProxy: 1.02, WriteVsProxy: 0.5},
			},
		},
		Fsync: &fsyncFigures{P50us: 370},
		GoBench: []*goBenchRun{{Results: []*benchResult{
			bench("BenchmarkRecordedCalls/postgres/64", "calls/s", 3000),
			bench("BenchmarkRecordedCalls/sqlite/64", "calls/s", 6000),
			bench("BenchmarkHistory/write/fresh", "ns/op", 1000000),
			bench("BenchmarkHistory/write/history", "ns/op", 1050000),
			bench("BenchmarkHistory/read/fresh", "ns/op", 200000),
			bench("BenchmarkHistory/read/history", "ns/op", 300000),
			bench("BenchmarkFailsafeReference", "ns/op", 2000),
			bench("BenchmarkCall/read", "ns/op", 2900),
			bench("BenchmarkCall/write", "ns/op", 4000),
		}}},
		notes: map[string]string{"write-throughput": "two writes", "read-p50": "should not show: met"},
	}
	want := map[string]struct {
		pass         bool
		value, limit float64
		note         string
	}{
		"read-throughput":    {true, 1.02, 1.0, ""},
		"write-throughput":   {false, 0.5, 0.7, "two writes"},
		"read-p50":           {false, 260, 250, ""},
		"write-p50":          {false, 1100, 150 + 2*370 + 150, ""},
		"postgres-vs-sqlite": {false, 0.5, 1.0, ""},
		"history-write":      {true, 1.05, historyLimit, ""},
		"history-read":       {false, 1.5, historyLimit, ""},
		"pipeline-read":      {true, 1.45, pipelineLimit, ""},
		"pipeline-write":     {false, 2.0, pipelineLimit, ""},
		"soak-duplicates":    {false, 0, 0, ""},
	}
	paired := func(name string, vs ...float64) *benchResult {
		return &benchResult{Name: name, Median: map[string]float64{"ns/op": median(vs)}, Values: map[string][]float64{"ns/op": vs}}
	}
	// Paired runs: the load doubled in the third; the median of ratios
	// (1.0x) is not the ratio of medians (1.5x).
	d.GoBench = append(d.GoBench, &goBenchRun{Results: []*benchResult{
		paired("BenchmarkHistory/paired/fresh", 100, 100, 400),
		paired("BenchmarkHistory/paired/history", 100, 150, 400),
	}})
	if r := pairedRatio(d, "BenchmarkHistory/paired/history", "BenchmarkHistory/paired/fresh", "ns/op"); !near(r, 1.0) {
		t.Errorf("paired ratio %g, want 1", r)
	}
	for _, tg := range evaluate(d) {
		w, ok := want[tg.ID]
		if !ok {
			continue
		}
		delete(want, tg.ID)
		if tg.Pass != w.pass || !near(tg.Value, w.value) || !near(tg.Limit, w.limit) || (!tg.Pass && tg.Note != w.note && w.note != "") {
			t.Errorf("%s: pass %v value %g limit %g note %q, want pass %v value %g limit %g note %q",
				tg.ID, tg.Pass, tg.Value, tg.Limit, tg.Note, w.pass, w.value, w.limit, w.note)
		}
		if tg.ID == "read-p50" && tg.Gap != "over by 10 µs (1.04x the goal)" {
			t.Errorf("read-p50 gap %q", tg.Gap)
		}
		if tg.ID == "soak-duplicates" && tg.Measured != "not measured" {
			t.Errorf("soak not run: measured %q", tg.Measured)
		}
	}
	for id := range want {
		t.Errorf("no target %s", id)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
