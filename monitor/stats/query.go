package stats

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// MaxWindow is the longest window a query accepts.
const MaxWindow = 31 * 24 * time.Hour

// Report is the answer of GET /v1/stats: figures per tool and per
// dependency over a window.
type Report struct {
	// Window is the window asked for, written like "1h" or "15m".
	Window string `json:"window"`
	// Since is now minus the window.
	Since time.Time `json:"since"`
	// Source is "rows" when the figures are exact, "sketch" otherwise.
	Source Source `json:"source"`
	// PercentileMethod names how the percentiles were computed
	// (MethodRows or MethodSketch).
	PercentileMethod string `json:"percentile_method"`
	// Tools are the figures per tool name.
	Tools map[string]*Figures `json:"tools"`
	// Dependencies are the figures per dependency, over all its tools.
	Dependencies map[string]*Figures `json:"dependencies"`
}

// Query returns the figures of the last window: from the rows when the
// window holds at most Config.ExactRows calls, else from the buckets of
// every replica merged with this process's unflushed ones.
func (a *Aggregator) Query(ctx context.Context, window time.Duration) (*Report, error) {
	if err := checkWindow(window); err != nil {
		return nil, err
	}
	now := a.cfg.Clock.Now()
	since := now.Add(-window)
	tools := map[string]*aggregate{}
	var total int64
	visible := visibleIn(ctx)
	err := a.sources(ctx, a.bucketStart(since), func(s *source) {
		if !visible(s.tool) {
			return
		}
		acc := tools[s.tool]
		if acc == nil {
			acc = newAggregate()
			tools[s.tool] = acc
		}
		total += a.mergeSource(acc, s)
	})
	if err != nil {
		return nil, err
	}
	// The buckets cover the window, so they count at least the calls
	// whose rows the store holds: past the limit, skip reading rows.
	if n := a.cfg.ExactRows; n >= 0 && total <= int64(n) {
		rows, err := a.cfg.Store.ListExecutions(ctx, types.ExecutionFilter{Since: since, Limit: n + 1})
		if err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		if len(rows) <= n {
			return a.fromRows(rows, window, since, visible), nil
		}
	}
	return a.fromSketches(tools, window, since), nil
}

// fromSketches builds a report from per-tool merged aggregates.
func (a *Aggregator) fromSketches(tools map[string]*aggregate, window time.Duration, since time.Time) *Report {
	r := newReport(window, since, SourceSketch)
	deps := map[string]*aggregate{}
	for name, agg := range tools {
		r.Tools[name] = a.sketchFigures(agg, a.readTimeout(name))
		r.Tools[name].Dependency = agg.dependency
		if agg.dependency == "" {
			continue
		}
		if d := deps[agg.dependency]; d == nil {
			deps[agg.dependency] = agg.clone()
		} else {
			d.merge(agg)
		}
	}
	for name, agg := range deps {
		r.Dependencies[name] = a.sketchFigures(agg, 0)
	}
	return r
}

func (a *Aggregator) sketchFigures(agg *aggregate, timeout time.Duration) *Figures {
	return newFigures(agg, agg.latency.quantile(0.5), agg.latency.quantile(0.95), agg.latency.quantile(0.99), timeout, SourceSketch)
}

// fromRows builds an exact report from execution rows.
func (a *Aggregator) fromRows(rows []types.Execution, window time.Duration, since time.Time, visible func(string) bool) *Report {
	r := newReport(window, since, SourceRows)
	type exact struct {
		agg       *aggregate
		latencies []float64
	}
	tools, deps := map[string]*exact{}, map[string]*exact{}
	add := func(m map[string]*exact, name string, row *types.Execution) {
		e := m[name]
		if e == nil {
			e = &exact{agg: &aggregate{codes: map[types.Code]int64{}, refusedCodes: map[types.Code]int64{}}}
			m[name] = e
		}
		e.agg.add(row)
		if sample(row) {
			e.latencies = append(e.latencies, max(row.LatencyMS, 0))
		}
	}
	for i := range rows {
		row := &rows[i]
		if !visible(toolOf(row)) {
			continue
		}
		add(tools, toolOf(row), row)
		if row.Dependency != "" {
			add(deps, row.Dependency, row)
		}
	}
	figures := func(e *exact, timeout time.Duration) *Figures {
		slices.Sort(e.latencies)
		return newFigures(e.agg, exactQuantile(e.latencies, 0.5), exactQuantile(e.latencies, 0.95),
			exactQuantile(e.latencies, 0.99), timeout, SourceRows)
	}
	for name, e := range tools {
		r.Tools[name] = figures(e, a.readTimeout(name))
		r.Tools[name].Dependency = e.agg.dependency
	}
	for name, e := range deps {
		r.Dependencies[name] = figures(e, 0)
	}
	return r
}

// exactQuantile is the value at the nearest rank of sorted values
// (NearestRank), the same definition the sketch follows.
func exactQuantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[NearestRank(q, int64(len(sorted)))]
}

// NearestRank is the index, from 0, of the q-quantile of n sorted samples
// by the nearest-rank method: the ceil(q·n)-th smallest sample. It never
// puts a percentile below a sample in the top (1−q) share: with latencies
// of 0, 0, 0 ms and 16 s, p95 and p99 are both 16 s (where the rank
// floor(q·(n−1)) gave 0 ms).
func NearestRank(q float64, n int64) int64 {
	if n <= 0 {
		return 0
	}
	// Less a hair, so that float noise (0.95·20 = 19.000000000000004)
	// does not move a whole rank up.
	rank := int64(math.Ceil(q*float64(n) - 1e-9))
	return min(max(rank, 1), n) - 1
}

func newReport(window time.Duration, since time.Time, src Source) *Report {
	method := MethodRows
	if src == SourceSketch {
		method = MethodSketch
	}
	return &Report{Window: FormatWindow(window), Since: since.UTC(), Source: src, PercentileMethod: method,
		Tools: map[string]*Figures{}, Dependencies: map[string]*Figures{}}
}

// readTimeout is a tool's configured read timeout, or 0.
func (a *Aggregator) readTimeout(tool string) time.Duration {
	if t := a.toolConfig(tool); t != nil {
		return t.Timeout.Read.D()
	}
	return 0
}

// toolConfig is a tool's config, or nil.
func (a *Aggregator) toolConfig(tool string) *config.Tool {
	if a.cfg.LiveTools != nil {
		if cfg := a.cfg.LiveTools(); cfg != nil {
			return cfg.Tools[tool]
		}
	}
	cfg := a.tools.Load()
	if cfg == nil {
		return nil
	}
	return cfg.Tools[tool]
}

// source is one bucket of a query: stored (data) or this process's own
// in-memory one (agg).
type source struct {
	tool  string
	start time.Time
	data  []byte
	agg   *aggregate
}

// sources calls fn with each bucket that starts at or after from: every
// replica's stored buckets, except that this replica's in-memory buckets
// replace its stored copies of the same tool and start. fn must not keep
// its argument.
func (a *Aggregator) sources(ctx context.Context, from time.Time, fn func(s *source)) error {
	stored, err := a.cfg.Store.LoadStats(ctx, from)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	mem := a.snapshot(from)
	var s source
	for i := range stored {
		b := &stored[i]
		if b.Replica == a.cfg.Replica && mem[bucketKey{b.Tool, b.Start.UnixNano()}] != nil {
			continue
		}
		s = source{tool: b.Tool, start: b.Start.UTC(), data: b.Data}
		fn(&s)
	}
	for k, agg := range mem {
		s = source{tool: k.tool, start: time.Unix(0, k.start).UTC(), agg: agg}
		fn(&s)
	}
	return nil
}

// mergeSource adds a bucket to acc and returns the calls it held. A bucket
// that does not decode is skipped (and logged).
func (a *Aggregator) mergeSource(acc *aggregate, s *source) int64 {
	if s.agg != nil {
		acc.merge(s.agg)
		return s.agg.calls
	}
	before := acc.calls
	if err := acc.mergeEncoded(s.data); err != nil {
		a.cfg.Logger.Warn("stats: skipping a bucket that does not decode", "tool", s.tool, "start", s.start, "err", err)
	}
	return acc.calls - before
}

// ErrBadWindow is returned for a window that is not positive or is longer
// than MaxWindow.
var ErrBadWindow = errors.New("stats: bad window")

func checkWindow(d time.Duration) error {
	if d <= 0 || d > MaxWindow {
		return fmt.Errorf("%w: %s (want more than 0 and at most %s)", ErrBadWindow, FormatWindow(d), FormatWindow(MaxWindow))
	}
	return nil
}

// ParseWindow reads a window: a Go duration ("90m", "1h", "1h30m") or a
// number of days ("7d").
func ParseWindow(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if n, err = strconv.Atoi(days); err == nil {
			d = time.Duration(n) * 24 * time.Hour
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a duration (use 15m, 1h, 24h or 7d)", ErrBadWindow, s)
	}
	return d, checkWindow(d)
}

// FormatWindow writes a window shortly: 1h, 15m, 90s, 7d, 1h30m.
func FormatWindow(d time.Duration) string {
	switch {
	case d > 0 && d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d > 0 && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	s := d.String() // 1h30m0s, 1m30s, 1.5s
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
