package main

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/bench/load"
)

// writeLoadCPU renders the load comparison's CPU per call: each server's
// CPU time over a segment per successful call, beside the proxy's from
// the same run.
func writeLoadCPU(b *strings.Builder, l *load.Report) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### CPU per call\n\n")
	p("The CPU time (utime + stime from `/proc/PID/stat`, all threads) each server process used over a segment,\n")
	p("divided by the segment's successful calls; the median of the rounds (each round's in the next column). It moves\n")
	p("less than throughput when other work shares the cores, but it still grows with the machine's load average (fewer\n")
	p("calls share each batch and each wake-up): compare runs at similar loads. (b) is the proxy process, (c) and (d) the\n")
	p("`toolgate serve` process; (e), when run, is its own `toolgate serve` on PostgreSQL plus the PostgreSQL\n")
	p("cluster (the postmaster and every process under it: backends, WAL writer, checkpointer), on a cluster of its\n")
	p("own. The direct path has no server process of its own to measure.\n\n")
	p("| path | callers | CPU per call | per round | toolgate (or proxy) | PostgreSQL | ratio to (b) | ratio to (d) |\n")
	p("|---|---:|---:|---|---:|---:|---:|---:|\n")
	for _, r := range l.Results {
		if r.CPUPerCallUS == 0 {
			continue
		}
		rounds := make([]string, len(r.RoundCPUus))
		for i, c := range r.RoundCPUus {
			rounds[i] = group(c, 0)
		}
		db, toD := "", ""
		if r.Path == load.PGWrite {
			db = fmtUS(r.DBCPUPerCallUS)
			if d := l.Get(load.Write, r.Concurrency); d != nil && d.CPUPerCallUS != 0 {
				toD = fmtRatio(r.CPUPerCallUS / d.CPUPerCallUS)
			}
		}
		toB := ""
		if b := l.Get(load.Proxy, r.Concurrency); b != nil && b.CPUPerCallUS != 0 {
			toB = fmtRatio(r.CPUPerCallUS / b.CPUPerCallUS)
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Label, r.Concurrency, fmtUS(r.CPUPerCallUS),
			strings.Join(rounds, " / "), fmtUS(r.ServerCPUPerCallUS), db, toB, toD)
	}
	p("\n")
}
