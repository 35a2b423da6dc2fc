package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/bench/load"
)

// target is one goal of issue 8 and how this run did.
type target struct {
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
	Pass     bool   `json:"pass"`
	// Gap says by how much a missed target was missed.
	Gap string `json:"gap,omitempty"`
	// Source names the figure.
	Source string `json:"source"`
}

// newTarget judges value against limit. A NaN value (not measured; NaN is
// not JSON) is stored as 0 with Measured "not measured", and misses.
func newTarget(name string, value, limit float64, atLeast bool, unit string, format func(float64) string, source string) target {
	t := target{Name: name, Value: value, Limit: limit, AtLeast: atLeast, Unit: unit, Source: source}
	op := "≤"
	if atLeast {
		op = "≥"
	}
	t.Goal = op + " " + format(limit)
	if math.IsNaN(value) {
		t.Value, t.Measured, t.Gap = 0, "not measured", "not measured"
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
	default:
		t.Gap = fmt.Sprintf("over by %.0f%% (%.2fx the goal)", 100*(value-limit)/limit, value/limit)
	}
	return t
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2fx", v) }
func fmtUS(v float64) string    { return group(v, 0) + " µs" }
func fmtNS(v float64) string    { return fmt.Sprintf("%.2f µs", v/1000) }
func fmtCount(v float64) string { return group(v, 0) }
func fmtMS(v float64) string    { return fmt.Sprintf("%.2f ms", v) }

// evaluate computes every target from the report's figures.
func evaluate(d *reportData) []target {
	nan := math.NaN()
	var ts []target
	ratio := func(conc int, f func(*load.Ratios) float64) float64 {
		if d.Load == nil {
			return nan
		}
		if r := d.Load.RatiosAt(conc); r != nil {
			return f(r)
		}
		return nan
	}
	ts = append(ts,
		newTarget("(c)/(b): read through toolgate vs the baseline proxy, throughput at 32 callers",
			ratio(32, func(r *load.Ratios) float64 { return r.ReadVsProxy }), 1.0, true, "x", fmtRatio, "load comparison"),
		newTarget("(d)/(b): durable write through toolgate vs the baseline proxy, throughput at 32 callers",
			ratio(32, func(r *load.Ratios) float64 { return r.WriteVsProxy }), 0.7, true, "x", fmtRatio, "load comparison"),
		newTarget("added p50 latency over direct at 1 caller, read ((c) − (a))",
			ratio(1, func(r *load.Ratios) float64 { return r.ReadAddedP50us }), 300, false, "µs", fmtUS, "load comparison"),
		newTarget("added p50 latency over direct at 1 caller, durable write ((d) − (a))",
			ratio(1, func(r *load.Ratios) float64 { return r.WriteAddedP50us }), 600, false, "µs", fmtUS, "load comparison"),
	)
	for _, effect := range []string{"read", "write"} {
		name := "BenchmarkCall/" + effect
		ts = append(ts,
			newTarget("in-process pipeline, "+effect+" (Go-function tool, memory store): time per call",
				benchMedian(d, name, "ns/op"), 5000, false, "ns", fmtNS, name),
			newTarget("in-process pipeline, "+effect+": allocations per call",
				benchMedian(d, name, "allocs/op"), 40, false, "allocs", fmtCount, name),
		)
	}
	ts = append(ts,
		newTarget("recorded write calls per second, SQLite, 64 concurrent callers",
			benchMedian(d, "BenchmarkRecordedCalls/sqlite/64", "calls/s"), 25000, true, "calls/s", fmtCount, "BenchmarkRecordedCalls/sqlite/64"),
		newTarget("/v1/stats over 1,000,000 recorded calls (the aggregator's 24h query)",
			benchMedian(d, "BenchmarkQueryMillionCalls", "ms/query"), 10, false, "ms", fmtMS, "BenchmarkQueryMillionCalls"),
	)
	soakFig := func(f func() float64) float64 {
		if d.Soak == nil || d.Soak.Toolgate == nil {
			return nan
		}
		return f()
	}
	ts = append(ts,
		newTarget("soak: duplicate effects",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.Duplicates) }), 0, false, "", fmtCount, "soak"),
		newTarget("soak: lost execution rows (answered calls without their row, plus rows of no answered call)",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.LostRows + d.Soak.Toolgate.ExtraRows) }), 0, false, "", fmtCount, "soak"),
		newTarget("soak: unsettled unknowns once verify has run (the effect happened, the ledger does not say completed)",
			soakFig(func() float64 { return float64(d.Soak.Toolgate.UnsettledWithEffect) }), 0, false, "", fmtCount, "soak"),
		newTarget("soak: every other check (see the soak's section)",
			soakFig(func() float64 { return float64(len(d.Soak.Failures)) }), 0, false, "", func(v float64) string {
				return group(v, 0) + " failed"
			}, "soak"),
	)
	return ts
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
