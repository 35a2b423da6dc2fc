package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/types"
)

// statsReplica names the CLI's (empty) aggregator: it records nothing and
// saves nothing, it only reads what servers saved.
const statsReplica = "toolgate-stats-cli"

func runStats(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "stats", "[--config FILE] [--window 1h] [--json]",
		"toolgate stats --config toolgate.yaml --window 24h\ntoolgate stats --json")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the figures)")
	windowFlag := fs.String("window", "1h", "how far back to look: 15m, 1h, 24h, 7d")
	asJSON := fs.Bool("json", false, "print the report as JSON (as GET /v1/stats answers it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	window, err := stats.ParseWindow(*windowFlag)
	if err != nil {
		return fmt.Errorf("%w: --window %v", errUsage, err)
	}
	// No crash recovery: this only reads, and may run beside a server.
	cfg, st, err := openConfigStore(ctx, *path)
	if err != nil {
		return err
	}
	defer st.Close()
	// The CLI has no live aggregator: the figures come from the buckets
	// the servers flushed and, for small windows, from the rows.
	agg, err := stats.New(ctx, &stats.Config{Store: st, Tools: cfg, Replica: statsReplica, FlushInterval: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer agg.Close(context.WithoutCancel(ctx))
	rep, err := agg.Query(ctx, window)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, rep)
	}
	printStats(e.stdout, rep, cfg.Store)
	return nil
}

// printStats writes the report as a table, one tool a line.
func printStats(w io.Writer, rep *stats.Report, storeURL string) {
	if len(rep.Tools) == 0 {
		fmt.Fprintf(w, "No calls in the last %s (store %s).\n", rep.Window, storeURL)
		return
	}
	how := "exact, from the execution rows"
	if rep.Source == stats.SourceSketch {
		how = fmt.Sprintf("from the sketches: percentiles within %g%%", stats.RelativeAccuracy*100)
	}
	fmt.Fprintf(w, "Last %s, %s.\n\n", rep.Window, how)
	table := [][]string{{"TOOL", "CALLS", "REFUSED", "DEP-ERR%", "RETRY%", "SAMPLES", "P50", "P95", "P99", "TIMEOUT", "SUGGESTED", ""}}
	tools := make([]string, 0, len(rep.Tools))
	for name := range rep.Tools {
		tools = append(tools, name)
	}
	slices.Sort(tools)
	for _, name := range tools {
		f := rep.Tools[name]
		timeout := "-"
		if f.TimeoutMS > 0 {
			timeout = formatMillis(float64(f.TimeoutMS))
		}
		suggested := f.SuggestedTimeoutNote
		if suggested == "" {
			suggested = formatMillis(float64(f.SuggestedTimeoutMS))
		}
		table = append(table, []string{name, strconv.FormatInt(f.Calls, 10), strconv.FormatInt(f.Refused, 10),
			pct(f.DependencyErrorRate), pct(f.RetryRate), strconv.FormatInt(f.Samples, 10),
			formatMillis(f.P50MS), formatMillis(f.P95MS), formatMillis(f.P99MS), timeout, suggested, notes(f)})
	}
	printTable(w, table)
	fmt.Fprintf(w, "\nREFUSED calls were answered by toolgate without calling the dependency; DEP-ERR%% is the share of the\n"+
		"calls that reached the dependency (SAMPLES) that failed there. P50, P95 and P99 are by nearest rank\n"+
		"over the SAMPLES. SUGGESTED is the observed p99 plus 50%% headroom, rounded up, once a tool has\n"+
		"%d attempts.\n", stats.MinSuggestAttempts)
}

// printTable aligns columns: the first and last to the left, the numbers
// between them to the right.
func printTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len(cell))
		}
	}
	last := len(widths) - 1
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			switch i {
			case 0:
				fmt.Fprintf(&b, "%-*s", widths[i], cell)
			case last:
				if cell != "" {
					b.WriteString("  " + cell)
				}
			default:
				fmt.Fprintf(&b, "  %*s", widths[i], cell)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// notes flags timeout pressure and names the most frequent failures.
func notes(f *stats.Figures) string {
	var parts []string
	if f.TimeoutPressure {
		parts = append(parts, "!! p95 near timeout")
	}
	var failures []count
	for c, n := range f.Codes {
		if c != types.CodeOK {
			failures = append(failures, count{c, n - f.RefusedCodes[c]})
		}
	}
	var refusals []count
	for c, n := range f.RefusedCodes {
		refusals = append(refusals, count{c, n})
	}
	parts = append(parts, topCodes("", failures)...)
	parts = append(parts, topCodes("refused ", refusals)...)
	return strings.Join(parts, "  ")
}

// count is a number of calls with one code.
type count struct {
	code types.Code
	n    int64
}

// topCodes names the two most frequent codes, after prefix.
func topCodes(prefix string, counts []count) []string {
	counts = slices.DeleteFunc(counts, func(c count) bool { return c.n <= 0 })
	slices.SortFunc(counts, func(a, b count) int {
		if a.n != b.n {
			return int(b.n - a.n)
		}
		return strings.Compare(string(a.code), string(b.code))
	})
	var out []string
	for i, c := range counts {
		if i == 2 {
			break
		}
		out = append(out, fmt.Sprintf("%s%s %d", prefix, c.code, c.n))
	}
	return out
}

// pct writes a rate as a percentage with one decimal.
func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

// formatMillis writes a latency shortly: 0.4ms, 45ms, 4.6s, 5s, 12s.
func formatMillis(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	case ms < 10_000:
		return strconv.FormatFloat(math.Round(ms/100)/10, 'f', -1, 64) + "s"
	}
	return strconv.FormatFloat(math.Round(ms/1000), 'f', -1, 64) + "s"
}
