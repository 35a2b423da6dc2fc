package main

import (
	"fmt"
	"strings"
)

// writeTargets renders the targets table and, for each missed target, what
// the profile says and what would close it.
func writeTargets(b *strings.Builder, d *reportData) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Targets\n\n")
	met := 0
	for _, t := range d.Targets {
		if t.Pass {
			met++
		}
	}
	p("%d of %d met. The goals of issues 20 and 31, each a ratio to (or a sum over) a floor measured in this same run.\n", met, len(d.Targets))
	if len(d.Skipped) > 0 {
		p("This run skipped %s: their targets are not measured.\n", strings.Join(d.Skipped, ", "))
	}
	p("\n| target | measured | goal | measured against (this run) | result |\n|---|---:|---:|---|---|\n")
	for _, t := range d.Targets {
		result := "met"
		if !t.Pass {
			result = "**missed**: " + t.Gap
		}
		p("| %s | %s | %s | %s | %s |\n", t.Name, t.Measured, t.Goal, t.Floor, result)
	}
	p("\n")
	for _, w := range d.Warnings {
		p("Warning: %s.\n\n", w)
	}
	var missed []target
	for _, t := range d.Targets {
		if !t.Pass {
			missed = append(missed, t)
		}
	}
	if len(missed) == 0 {
		return
	}
	p("### Missed: the profile, and what would close it\n\n")
	p("The text of each is kept by hand in `%s` (a section `## <id>` per target), from the figures and profiles\n", notesFile)
	p("of a report; the top frames under it are this run's own (see \"CPU profiles\" below).\n\n")
	for _, t := range missed {
		p("#### %s (`%s`): %s\n\n", t.Name, t.ID, t.Gap)
		if t.Note != "" {
			p("%s\n\n", t.Note)
		} else {
			p("No note yet in `%s`.\n\n", notesFile)
		}
		if sum := profileOf(d, t.Profile); sum != nil && len(sum.Self) > 0 {
			top := sum.Self[:min(6, len(sum.Self))]
			parts := make([]string, len(top))
			for i, f := range top {
				parts[i] = fmt.Sprintf("`%s` %.1f%%", f.Symbol, f.Percent)
			}
			p("Top own CPU of `toolgate serve` under this load (%s, samples: %s): %s.\n\n", sum.Name, sum.Samples, strings.Join(parts, ", "))
		}
	}
}

// profileOf is the profile of load path path, or nil.
func profileOf(d *reportData, path string) *profileSummary {
	if path == "" {
		return nil
	}
	for _, sum := range d.Profiles {
		if strings.Contains(sum.Name, "-"+path+"-") {
			return sum
		}
	}
	return nil
}

// writeProfiles renders the top of each CPU profile of toolgate serve.
func writeProfiles(b *strings.Builder, d *reportData) {
	if len(d.Profiles) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## CPU profiles\n\n```sh\n%s\n```\n\n", d.ProfileCommand)
	p("Linux perf (`perf record -F 999 -g`) on the `toolgate serve` process while the load comparison drives it at %d\n", profileConcurrency)
	p("callers, in a run of its own after the measured one (profiling slows the server: these runs' figures are not\n")
	p("reported). Own: the share of samples in the function itself; inclusive: with all it calls (selected frames:\n")
	p("toolgate's own, SQLite's commit and fsync, the garbage collector, JSON, HTTP serving, syscalls).\n\n")
	for _, sum := range d.Profiles {
		p("### %s\n\nSamples: %s.\n\n| own | function |\n|---:|---|\n", sum.Name, sum.Samples)
		for _, f := range sum.Self {
			p("| %.1f%% | `%s` |\n", f.Percent, f.Symbol)
		}
		p("\n| inclusive | function |\n|---:|---|\n")
		for _, f := range sum.Inclusive[:min(20, len(sum.Inclusive))] {
			p("| %.1f%% | `%s` |\n", f.Percent, f.Symbol)
		}
		p("\n")
	}
}
