package stats

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// refusal is a call toolgate refused before any attempt.
func refusal(tool string, at time.Time, code types.Code) *types.Execution {
	r := failed(tool, at, 0.1, code)
	r.Attempts = 0
	return r
}

// TestFourSamplesNearestRank: calls of 0, 0, 0 ms and 16 s. The old rank,
// floor(q·(n−1)), put p95 and p99 at 0 ms; nearest rank puts both at the
// slow call, on every store and from the rows as from the sketches.
func TestFourSamplesNearestRank(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			clk := newClock()
			st := newStore(t, kind, clk)
			rows := []*types.Execution{row("issue_refund", t0, 0), row("issue_refund", t0, 0),
				row("issue_refund", t0, 0), row("issue_refund", t0, 16_000)}
			commitRows(t, st, rows)
			rec := newAgg(t, st, clk, "a")
			for _, r := range rows {
				rec.Record(r)
			}
			if err := rec.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			clk.Set(t0.Add(time.Minute))
			for _, c := range []struct {
				src    Source
				method string
				agg    *Aggregator
			}{
				{SourceRows, MethodRows, newAgg(t, st, clk, "reader")},
				{SourceSketch, MethodSketch, newAgg(t, st, clk, "reader-sketch", sketchOnly)},
			} {
				rep, err := c.agg.Query(t.Context(), time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				f := rep.Tools["issue_refund"]
				if rep.Source != c.src || rep.PercentileMethod != c.method || f == nil {
					t.Fatalf("%s: source %q, method %q, figures %+v", c.src, rep.Source, rep.PercentileMethod, f)
				}
				if !within(f.P95MS, 16_000) || !within(f.P99MS, 16_000) || f.P50MS != 0 {
					t.Errorf("%s: p50 %v, p95 %v, p99 %v; want 0, 16 s, 16 s", c.src, f.P50MS, f.P95MS, f.P99MS)
				}
				if f.Samples != 4 || f.SuggestedTimeoutMS != 0 || f.SuggestedTimeoutNote != "not enough data yet (4 of 20 attempts)" {
					t.Errorf("%s: samples %d, suggested %d %q; want 4 samples and not enough data", c.src, f.Samples, f.SuggestedTimeoutMS, f.SuggestedTimeoutNote)
				}
			}
		})
	}
}

func TestNearestRank(t *testing.T) {
	cases := []struct {
		q    float64
		n    int64
		want int64
	}{
		{0.99, 4, 3}, {0.95, 4, 3}, {0.5, 4, 1}, {0.5, 1, 0}, {0.99, 0, 0},
		{0.95, 20, 18}, // 19th of 20: float noise must not make it the 20th
		{0.99, 100, 98}, {0.99, 101, 99}, {0.5, 3, 1}, {0, 5, 0}, {1, 5, 4},
	}
	for _, c := range cases {
		if got := NearestRank(c.q, c.n); got != c.want {
			t.Errorf("NearestRank(%v, %d) = %d, want %d", c.q, c.n, got, c.want)
		}
	}
}

// TestRefusalsAreNeitherSamplesNorDependencyErrors: five refusals (no
// attempt) beside three successes and one failure at the dependency.
func TestRefusalsAreNeitherSamplesNorDependencyErrors(t *testing.T) {
	for _, source := range []Source{SourceRows, SourceSketch} {
		t.Run(string(source), func(t *testing.T) {
			clk := newClock()
			st := newStore(t, "memory", clk)
			mutate := func(*Config) {}
			if source == SourceSketch {
				mutate = sketchOnly
			}
			agg := newAgg(t, st, clk, "a", mutate)
			broke := failed("issue_refund", t0, 300, types.CodeUpstreamError)
			broke.Attempts, broke.Retries = 2, 1
			rows := []*types.Execution{row("issue_refund", t0, 100), row("issue_refund", t0, 100), row("issue_refund", t0, 100), broke,
				refusal("issue_refund", t0, types.CodeInvalidArgument), refusal("issue_refund", t0, types.CodeInvalidArgument),
				refusal("issue_refund", t0, types.CodeInvalidArgument), refusal("issue_refund", t0, types.CodeQuotaExceeded),
				refusal("issue_refund", t0, types.CodeQuotaExceeded)}
			commitRows(t, st, rows)
			for _, r := range rows {
				agg.Record(r)
			}
			rep, err := agg.Query(t.Context(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []*Figures{rep.Tools["issue_refund"], rep.Dependencies["payments"]} {
				if f.Calls != 9 || f.Errors != 6 || f.Refused != 5 || f.DependencyErrors != 1 || f.Samples != 4 {
					t.Errorf("calls %d errors %d refused %d dependency_errors %d samples %d; want 9 6 5 1 4",
						f.Calls, f.Errors, f.Refused, f.DependencyErrors, f.Samples)
				}
				if f.DependencyErrorRate != 0.25 || f.RefusedRate != 0.5556 {
					t.Errorf("dependency_error_rate %v, refused_rate %v; want 0.25, 0.5556", f.DependencyErrorRate, f.RefusedRate)
				}
				if f.RefusedCodes[types.CodeInvalidArgument] != 3 || f.RefusedCodes[types.CodeQuotaExceeded] != 2 || len(f.RefusedCodes) != 2 {
					t.Errorf("refused_codes %v", f.RefusedCodes)
				}
				// Four samples: 100, 100, 100, 300. The refusals' 0.1 ms
				// would have made p50 0.1 ms.
				if !within(f.P50MS, 100) || !within(f.P99MS, 300) {
					t.Errorf("p50 %v, p99 %v; want 100 and 300 (refusals are not samples)", f.P50MS, f.P99MS)
				}
			}
		})
	}
}

// TestTokenSumsSaturate: usage of 2^63-1 twice shows 2^63-1, not -2, in
// memory and once the bucket went through the store.
func TestTokenSumsSaturate(t *testing.T) {
	clk := newClock()
	st := newStore(t, "sqlite", clk)
	agg := newAgg(t, st, clk, "a", sketchOnly)
	for range 2 {
		r := row("get_order", t0, 10)
		r.InputTokens, r.OutputTokens = math.MaxInt64, math.MaxInt64
		agg.Record(r)
	}
	if err := agg.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*Aggregator{"in memory": agg, "from the store": newAgg(t, st, clk, "b", sketchOnly)} {
		rep, err := a.Query(t.Context(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		f := rep.Tools["get_order"]
		if f.InputTokens != math.MaxInt64 || f.OutputTokens != math.MaxInt64 {
			t.Errorf("%s: tokens %d in, %d out; want 2^63-1 each", name, f.InputTokens, f.OutputTokens)
		}
	}
}

// TestScopedFigures: a caller that sees only get_order gets its figures
// and the dependency's over it alone; another tool's series is empty, as
// for a tool without calls.
func TestScopedFigures(t *testing.T) {
	clk := newClock()
	st := newStore(t, "memory", clk)
	agg := newAgg(t, st, clk, "a")
	rows := []*types.Execution{row("get_order", t0, 10), row("issue_refund", t0, 20), row("issue_refund", t0, 20)}
	commitRows(t, st, rows)
	for _, r := range rows {
		agg.Record(r)
	}
	ctx := WithVisible(context.Background(), func(tool string) bool { return tool == "get_order" })
	rep, err := agg.Query(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tools) != 1 || rep.Tools["get_order"] == nil || rep.Dependencies["payments"].Calls != 1 {
		t.Errorf("scoped report: tools %v, payments %+v; want get_order alone", rep.Tools, rep.Dependencies["payments"])
	}
	points, err := agg.Series(ctx, "issue_refund", time.Hour)
	if err != nil || len(points) != 0 {
		t.Errorf("a hidden tool's series: %v, %v; want none", points, err)
	}
	if all, _ := agg.Query(t.Context(), time.Hour); len(all.Tools) != 2 {
		t.Errorf("unscoped report: %v; want both tools", all.Tools)
	}
}
