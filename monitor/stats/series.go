package stats

import (
	"context"
	"slices"
	"time"
)

// MaxPoints is the most points a series has: a long window is drawn with
// steps of several buckets (merged, so the percentiles stay exact to the
// sketch's accuracy).
const MaxPoints = 720

// Point is one step of a tool's time series, for charts.
type Point struct {
	// Start is when the step begins; it lasts Aggregator.Step(window).
	Start  time.Time `json:"start"`
	Calls  int64     `json:"calls"`
	Errors int64     `json:"errors"`
	// ErrorRate is Errors / Calls.
	ErrorRate float64 `json:"error_rate"`
	// Refused and DependencyErrors split Errors as in Figures.
	Refused          int64 `json:"refused"`
	DependencyErrors int64 `json:"dependency_errors"`
	// Samples are the calls that reached the dependency, whose latencies
	// the percentiles are taken over (nearest rank, as in the report).
	Samples int64   `json:"samples"`
	P50MS   float64 `json:"p50_ms"`
	P95MS   float64 `json:"p95_ms"`
	P99MS   float64 `json:"p99_ms"`
}

// Step is the time one point of a series over window covers: the bucket
// width, or the least multiple of it that keeps the series within
// MaxPoints points.
func (a *Aggregator) Step(window time.Duration) time.Duration {
	w := a.cfg.Width
	n := (window + w - 1) / w // buckets in the window
	k := (n + MaxPoints - 1) / MaxPoints
	return max(k, 1) * w
}

// Series returns a tool's figures per step over the last window, oldest
// first, from the sketches of every replica (and this process's unflushed
// buckets). Steps without calls are left out.
func (a *Aggregator) Series(ctx context.Context, tool string, window time.Duration) ([]Point, error) {
	if err := checkWindow(window); err != nil {
		return nil, err
	}
	if !visibleIn(ctx)(tool) {
		return []Point{}, nil // as for a tool without calls
	}
	step := a.Step(window)
	since := a.cfg.Clock.Now().Add(-window)
	steps := map[int64]*aggregate{}
	err := a.sources(ctx, a.bucketStart(since), func(s *source) {
		if s.tool != tool {
			return
		}
		at := s.start.Truncate(step).UnixNano()
		acc := steps[at]
		if acc == nil {
			acc = newAggregate()
			steps[at] = acc
		}
		a.mergeSource(acc, s)
	})
	if err != nil {
		return nil, err
	}
	points := make([]Point, 0, len(steps))
	for at, agg := range steps {
		if agg.calls == 0 {
			continue
		}
		points = append(points, Point{
			Start: time.Unix(0, at).UTC(), Calls: agg.calls, Errors: agg.errors, ErrorRate: ratio(agg.errors, agg.calls),
			Refused: agg.refused, DependencyErrors: agg.depErrors, Samples: agg.samples,
			P50MS: roundMS(agg.latency.quantile(0.5)), P95MS: roundMS(agg.latency.quantile(0.95)), P99MS: roundMS(agg.latency.quantile(0.99)),
		})
	}
	slices.SortFunc(points, func(x, y Point) int { return x.Start.Compare(y.Start) })
	return points, nil
}
