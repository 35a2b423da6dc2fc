package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/bench/load"
)

// The CPU goals are judged at 32 callers against the same run's proxy
// (read, write) and SQLite write (PostgreSQL); a path not run is "not
// measured" and misses.
func TestCPUTargetsAgainstTheRunsFloors(t *testing.T) {
	tests := []struct {
		name    string
		results []*load.Result
		want    map[string]string // id -> Measured, "+" prefix when met
	}{
		{name: "every path", results: []*load.Result{
			{Path: load.Proxy, Concurrency: 32, CPUPerCallUS: 100},
			{Path: load.Read, Concurrency: 32, CPUPerCallUS: 140},
			{Path: load.Write, Concurrency: 32, CPUPerCallUS: 300},
			{Path: load.PGWrite, Concurrency: 32, CPUPerCallUS: 420, ServerCPUPerCallUS: 260, DBCPUPerCallUS: 160},
			{Path: load.Read, Concurrency: 1, CPUPerCallUS: 900}, // another concurrency: not judged
		}, want: map[string]string{"read-cpu": "+1.40x", "write-cpu": "3.00x", "postgres-cpu": "+1.40x", "postgres-db-cpu": "160 µs"}},
		{name: "no PostgreSQL", results: []*load.Result{
			{Path: load.Proxy, Concurrency: 32, CPUPerCallUS: 100},
			{Path: load.Read, Concurrency: 32, CPUPerCallUS: 160},
			{Path: load.Write, Concurrency: 32, CPUPerCallUS: 240},
		}, want: map[string]string{"read-cpu": "1.60x", "write-cpu": "+2.40x", "postgres-cpu": "not measured", "postgres-db-cpu": "not measured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, tg := range cpuTargets(&reportData{Load: &load.Report{Results: tt.results}}) {
				m := tg.Measured
				if tg.Pass {
					m = "+" + m
				}
				got[tg.ID] = m
			}
			for id, w := range tt.want {
				if got[id] != w {
					t.Errorf("%s: %q, want %q", id, got[id], w)
				}
			}
		})
	}
}

// The CPU table shows each measured path with its ratio to the proxy's,
// and (e)'s split and its ratio to (d).
func TestLoadCPUTable(t *testing.T) {
	var b strings.Builder
	writeLoadCPU(&b, &load.Report{Results: []*load.Result{
		{Path: load.Direct, Label: "(a) direct", Concurrency: 32},
		{Path: load.Proxy, Label: "(b) baseline proxy", Concurrency: 32, CPUPerCallUS: 100, ServerCPUPerCallUS: 100, RoundCPUus: []float64{99, 100, 101}},
		{Path: load.Write, Label: "(d) toolgate write", Concurrency: 32, CPUPerCallUS: 300, ServerCPUPerCallUS: 300, RoundCPUus: []float64{300}},
		{Path: load.PGWrite, Label: "(e) toolgate write, PostgreSQL", Concurrency: 32, CPUPerCallUS: 600, ServerCPUPerCallUS: 250, DBCPUPerCallUS: 350, RoundCPUus: []float64{600}},
	}})
	out := b.String()
	for _, want := range []string{
		"| (b) baseline proxy | 32 | 100 µs | 99 / 100 / 101 | 100 µs |  | 1.00x |  |",
		"| (d) toolgate write | 32 | 300 µs | 300 | 300 µs |  | 3.00x |  |",
		"| (e) toolgate write, PostgreSQL | 32 | 600 µs | 600 | 250 µs | 350 µs | 6.00x | 2.00x |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no row %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "(a) direct") {
		t.Errorf("the direct path has no CPU to show:\n%s", out)
	}
}
