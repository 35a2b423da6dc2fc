package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/bench/load"
)

// target is one goal (of issues 20 and 31) and how this run did.
type target struct {
	// ID names the target in bench/notes.md.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Value is the figure measured; NaN when it was not measured.
	Value float64 `json:"value"`
	// Limit is the goal: Value >= Limit when AtLeast, else Value <= Limit.
	Limit   float64 `json:"limit"`
	AtLeast bool    `json:"at_least"`
	Unit    string  `json:"unit"`
	// Measured and Goal are Value and Limit in words.
	Measured string `json:"measured"`
	Goal     string `json:"goal"`
	// Floor says what the goal is measured against, with its figure in
	// this run.
	Floor string `json:"floor,omitempty"`
	Pass  bool   `json:"pass"`
	// Gap says by how much a missed target was missed.
	Gap string `json:"gap,omitempty"`
	// Source names the figure.
	Source string `json:"source"`
	// Profile names the CPU profile of toolgate serve that bears on the
	// target (its load path: "toolgate_read", "toolgate_write"), if any.
	Profile string `json:"profile,omitempty"`
	// Note is bench/notes.md's text for the target: what the profile says
	// and what would close the gap.
	Note string `json:"note,omitempty"`
}

// newTarget judges value against limit. A NaN value (not measured; NaN is
// not JSON) is stored as 0 with Measured "not measured", and misses; so
// does a NaN limit (its floor was not measured).
func newTarget(name string, value, limit float64, atLeast bool, unit string, format func(float64) string, source string) target {
	t := target{Name: name, Value: value, Limit: limit, AtLeast: atLeast, Unit: unit, Source: source}
	op := "≤"
	if atLeast {
		op = "≥"
	}
	if math.IsNaN(limit) {
		t.Limit, t.Goal = 0, op+" (floor not measured)"
	} else {
		t.Goal = op + " " + format(limit)
	}
	if math.IsNaN(value) || math.IsNaN(limit) {
		t.Value, t.Measured, t.Gap = 0, "not measured", "not measured"
		if !math.IsNaN(value) {
			t.Value, t.Measured, t.Gap = value, format(value), "floor not measured"
		}
		return t
	}
	t.Measured = format(value)
	if atLeast {
		t.Pass = value >= limit
	} else {
		t.Pass = value <= limit
	}
	switch {
	case t.Pass:
	case limit == 0:
		t.Gap = fmt.Sprintf("%s over", format(value))
	case atLeast:
		t.Gap = fmt.Sprintf("missed by %.0f%% (%.2fx of the goal)", 100*(limit-value)/limit, value/limit)
	case unit == "µs":
		t.Gap = fmt.Sprintf("over by %s (%.2fx the goal)", fmtUS(value-limit), value/limit)
	default:
		t.Gap = fmt.Sprintf("over by %.0f%% (%.2fx the goal)", 100*(value-limit)/limit, value/limit)
	}
	return t
}

// with sets the target's id, floor and profile.
func (t target) with(id, floor, profile string) target {
	t.ID, t.Floor, t.Profile = id, floor, profile
	return t
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2fx", v) }
func fmtUS(v float64) string    { return group(v, 0) + " µs" }
func fmtCount(v float64) string { return group(v, 0) }

// historyLimit is the goal of "cost flat with history": a call on the
// seeded store costs at most this many times a call on a fresh one.
const historyLimit = 1.10

// pipelineLimit is the goal of the in-process pipeline against the
// failsafe-go reference, per call.
const pipelineLimit = 1.5

// evaluate computes every target from the report's figures.
func evaluate(d *reportData) []target {
	ts := loadTargets(d)
	ts = append(ts, cpuTargets(d)...)
	ts = append(ts, benchTargets(d)...)
	ts = append(ts, soakTargets(d)...)
	notes := d.notes
	for i := range ts {
		if !ts[i].Pass {
			ts[i].Note = notes[ts[i].ID]
		}
	}
	return ts
}

// loadTargets are the goals judged on the load comparison: throughput at
// 32 callers against the ReverseProxy, added p50 at one caller against
// the proxy's added p50 (and, for a write, the disk's fsync).
func loadTargets(d *reportData) []target {
	nan := math.NaN()
	ratios := func(conc int) *load.Ratios {
		if d.Load == nil {
			return nil
		}
		return d.Load.RatiosAt(conc)
	}
	result := func(p load.Path, conc int) *load.Result {
		if d.Load == nil {
			return nil
		}
		return d.Load.Get(p, conc)
	}
	var readX, writeX, proxyAdded, readAdded, writeAdded = nan, nan, nan, nan, nan
	proxyFloor := "(b) httputil.ReverseProxy: not measured"
	if r := ratios(32); r != nil {
		readX, writeX = r.ReadVsProxy, r.WriteVsProxy
		if b := result(load.Proxy, 32); b != nil {
			proxyFloor = fmt.Sprintf("(b) httputil.ReverseProxy at 32 callers: %s calls/s", group(b.Throughput, 0))
		}
	}
	if r := ratios(1); r != nil {
		proxyAdded, readAdded, writeAdded = r.ProxyAddedP50us, r.ReadAddedP50us, r.WriteAddedP50us
	}
	fsync := nan
	if d.Fsync != nil {
		fsync = d.Fsync.P50us
	}
	readLimit, writeLimit := proxyAdded+100, proxyAdded+2*fsync+150
	readFloor := fmt.Sprintf("proxy's added p50 %s + 100 µs", fmtMaybe(proxyAdded, fmtUS))
	writeFloor := fmt.Sprintf("proxy's added p50 %s + 2 × fsync p50 %s + 150 µs", fmtMaybe(proxyAdded, fmtUS), fmtMaybe(fsync, fmtUS))
	return []target{
		newTarget("read through toolgate / ReverseProxy, throughput at 32 callers ((c)/(b))",
			readX, 1.0, true, "x", fmtRatio, "load comparison").with("read-throughput", proxyFloor, string(load.Read)),
		newTarget("durable write through toolgate / ReverseProxy, throughput at 32 callers ((d)/(b))",
			writeX, 0.7, true, "x", fmtRatio, "load comparison").with("write-throughput", proxyFloor, string(load.Write)),
		newTarget("read: added p50 over direct at 1 caller ((c) − (a))",
			readAdded, readLimit, false, "µs", fmtUS, "load comparison").with("read-p50", readFloor, string(load.Read)),
		newTarget("durable write: added p50 over direct at 1 caller ((d) − (a))",
			writeAdded, writeLimit, false, "µs", fmtUS, "load comparison, fsync").with("write-p50", writeFloor, string(load.Write)),
	}
}

// benchTargets are the goals judged on the Go benchmarks.
func benchTargets(d *reportData) []target {
	pg := benchMedian(d, "BenchmarkRecordedCalls/postgres/64", "calls/s")
	lite := benchMedian(d, "BenchmarkRecordedCalls/sqlite/64", "calls/s")
	ts := []target{
		newTarget("PostgreSQL / SQLite: recorded write calls/s at 64 callers",
			pg/lite, 1.0, true, "x", fmtRatio, "BenchmarkRecordedCalls/{postgres,sqlite}/64").
			with("postgres-vs-sqlite", "SQLite in the same run: "+fmtMaybe(lite, fmtCount)+" calls/s", ""),
	}
	for _, effect := range []string{"write", "read"} {
		fresh := benchMedian(d, "BenchmarkHistory/"+effect+"/fresh", "ns/op")
		ratio := pairedRatio(d, "BenchmarkHistory/"+effect+"/history", "BenchmarkHistory/"+effect+"/fresh", "ns/op")
		ts = append(ts, newTarget("cost flat with history, "+effect+": a call at step 1,000,000 in a store of 10M rows / on a fresh one (median of paired runs)",
			ratio, historyLimit, false, "x", fmtRatio, "BenchmarkHistory/"+effect).
			with("history-"+effect, "the same call on a fresh SQLite file: "+fmtMaybe(fresh/1000, fmtUS), ""))
	}
	ref := benchMedian(d, "BenchmarkFailsafeReference", "ns/op")
	for _, effect := range []string{"read", "write"} {
		ns := benchMedian(d, "BenchmarkCall/"+effect, "ns/op")
		ts = append(ts, newTarget("in-process pipeline / failsafe-go reference, "+effect+", time per call",
			ns/ref, pipelineLimit, false, "x", fmtRatio, "BenchmarkCall/"+effect+", BenchmarkFailsafeReference").
			with("pipeline-"+effect, "failsafe-go retry + breaker + timeout around the same no-op: "+fmtMaybe(ref/1000, fmtUS2), ""))
	}
	return ts
}

// soakTargets are the soak's checks, each of which must find nothing.
func soakTargets(d *reportData) []target {
	nan := math.NaN()
	soakFig := func(f func() float64) float64 {
		if d.Soak == nil || d.Soak.Toolgate == nil {
			return nan
		}
		return f()
	}
	return []target{
		newTarget("soak: duplicate effects",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.Duplicates) }), 0, false, "", fmtCount, "soak").with("soak-duplicates", "", ""),
		newTarget("soak: lost execution rows (answered calls without their row, plus rows of no answered call)",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.LostRows + d.Soak.Toolgate.ExtraRows) }), 0, false, "", fmtCount, "soak").with("soak-lost-rows", "", ""),
		newTarget("soak: unsettled unknowns once verify has run (the effect happened, the ledger does not say completed)",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.UnsettledWithEffect) }), 0, false, "", fmtCount, "soak").with("soak-unsettled", "", ""),
		newTarget("soak: every other check (see the soak's section)",
			soakFig(func() float64 { return float64(len(d.Soak.Failures)) }), 0, false, "", func(v float64) string {
				return group(v, 0) + " failed"
			}, "soak").with("soak-other", "", ""),
	}
}

func fmtUS2(v float64) string { return fmt.Sprintf("%.2f µs", v) }

// fmtMaybe is format(v), or "not measured" for NaN.
func fmtMaybe(v float64, format func(float64) string) string {
	if math.IsNaN(v) {
		return "not measured"
	}
	return format(v)
}

// pairedRatio is the median over runs of a's value over b's in the same
// run (an interleaved benchmark's runs take both in turn, so each pair saw
// the same load), or NaN. Without as many runs of each, it is the ratio of
// the medians.
func pairedRatio(d *reportData, a, b, unit string) float64 {
	va, vb := benchValues(d, a, unit), benchValues(d, b, unit)
	if len(va) == 0 || len(vb) == 0 {
		return math.NaN()
	}
	if len(va) != len(vb) {
		return median(va) / median(vb)
	}
	rs := make([]float64, len(va))
	for i := range va {
		rs[i] = va[i] / vb[i]
	}
	return median(rs)
}

// benchValues are every run's value of a benchmark's unit, in run order.
func benchValues(d *reportData, name, unit string) []float64 {
	for _, run := range d.GoBench {
		for _, r := range run.Results {
			if r.Name == name {
				return r.Values[unit]
			}
		}
	}
	return nil
}

// benchMedian is the median of a benchmark's unit, or NaN.
func benchMedian(d *reportData, name, unit string) float64 {
	for _, run := range d.GoBench {
		for _, r := range run.Results {
			if r.Name == name {
				if v, ok := r.Median[unit]; ok {
					return v
				}
			}
		}
	}
	return math.NaN()
}

func printTargets(w io.Writer, ts []target) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tMEASURED\tGOAL\tRESULT")
	for _, t := range ts {
		result := "met"
		if !t.Pass {
			result = "MISSED: " + t.Gap
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Measured, t.Goal, result)
	}
	tw.Flush()
}

// group formats v with the given decimals and thousands separators.
func group(v float64, decimals int) string {
	s := fmt.Sprintf("%.*f", decimals, math.Abs(v))
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	var out []byte
	for i, c := range []byte(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	sign := ""
	if v < 0 && s != "0" {
		sign = "-"
	}
	return sign + string(out) + frac
}
