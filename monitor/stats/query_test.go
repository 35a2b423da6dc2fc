package stats

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// distributions are latency shapes (ms) with fixed seeds.
var distributions = []struct {
	name string
	gen  func(r *rand.Rand) float64
}{
	{"uniform 1ms-5s", func(r *rand.Rand) float64 { return 1 + r.Float64()*4999 }},
	{"exponential mean 200ms", func(r *rand.Rand) float64 { return r.ExpFloat64() * 200 }},
	{"bimodal 50ms and 3s", func(r *rand.Rand) float64 {
		if r.Float64() < 0.9 {
			return 50 + r.NormFloat64()*5
		}
		return 3000 + r.NormFloat64()*300
	}},
	{"lognormal heavy tail", func(r *rand.Rand) float64 { return 80 * mathExp(1.2*r.NormFloat64()) }},
}

func TestPercentilesWithinRelativeAccuracy(t *testing.T) {
	const n = 100_000
	for i, d := range distributions {
		t.Run(d.name, func(t *testing.T) {
			clk := newClock()
			st := newStore(t, "memory", clk)
			agg := newAgg(t, st, clk, "a", sketchOnly)
			r := rand.New(rand.NewPCG(uint64(i)+1, 42))
			values := make([]float64, n)
			for k := range values {
				values[k] = d.gen(r)
				// Spread over ten one-minute buckets, so the query merges.
				agg.Record(row("get_order", t0.Add(time.Duration(k%10)*time.Minute), values[k]))
			}
			clk.Set(t0.Add(10 * time.Minute))
			slices.Sort(values)

			check := func(how string, a *Aggregator) {
				rep, err := a.Query(t.Context(), time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				f := rep.Tools["get_order"]
				if f == nil || f.Calls != n || f.Source != SourceSketch {
					t.Fatalf("%s: figures %+v, want %d calls from the sketch", how, f, n)
				}
				for _, q := range []struct {
					q   float64
					got float64
				}{{0.5, f.P50MS}, {0.95, f.P95MS}, {0.99, f.P99MS}} {
					want := exactQuantile(values, q.q)
					t.Logf("%s: p%v %.3f ms, exact %.3f ms (%+.3f%%)", how, q.q*100, q.got, want, 100*(q.got-want)/want)
					if !within(q.got, want) {
						t.Errorf("%s: p%v = %.3f ms, exact %.3f ms: off by %.3f%%, more than %.0f%%",
							how, q.q*100, q.got, want, 100*(q.got-want)/want, RelativeAccuracy*100)
					}
				}
			}
			check("in memory", agg)
			if err := agg.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			// Another replica sees the same figures from the store alone.
			check("from the store", newAgg(t, st, clk, "b", sketchOnly))
		})
	}
}

func TestTimeoutPressureAndSuggestedTimeout(t *testing.T) {
	// issue_refund has a 5s read timeout, get_order 2s, post_note 1s.
	cases := []struct {
		tool          string
		latency       func(k int) float64 // 100 calls, k = 0..99
		wantPressure  bool
		wantSuggested int64
	}{
		// p95 = 4600 ms >= 0.8 x 5000: pressure; p99 4600 -> 6900 -> 7000.
		{"issue_refund", func(k int) float64 { return map[bool]float64{true: 4600, false: 900}[k >= 90] }, true, 7000},
		// p95 = 1000 ms < 0.8 x 2000; p99 = 1200 -> 1800 -> 2000.
		{"get_order", func(k int) float64 { return map[bool]float64{true: 1200, false: 1000}[k >= 98] }, false, 2000},
		// p95 exactly 800 ms = 0.8 x 1000: pressure (the bound is inclusive).
		{"post_note", func(int) float64 { return 800 }, true, 1500},
	}
	for _, source := range []Source{SourceRows, SourceSketch} {
		t.Run(string(source), func(t *testing.T) {
			clk := newClock()
			st := newStore(t, "memory", clk)
			agg := newAgg(t, st, clk, "a")
			if source == SourceSketch {
				agg = newAgg(t, st, clk, "a", sketchOnly)
			}
			var rows []*types.Execution
			for _, c := range cases {
				for k := range 100 {
					rows = append(rows, row(c.tool, t0, c.latency(k)))
				}
			}
			commitRows(t, st, rows)
			for _, r := range rows {
				agg.Record(r)
			}
			rep, err := agg.Query(t.Context(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Source != source {
				t.Fatalf("source %q, want %q", rep.Source, source)
			}
			for _, c := range cases {
				f := rep.Tools[c.tool]
				if f.TimeoutPressure != c.wantPressure {
					t.Errorf("%s: p95 %.1f ms against %d ms: pressure %v, want %v", c.tool, f.P95MS, f.TimeoutMS, f.TimeoutPressure, c.wantPressure)
				}
				if f.SuggestedTimeoutMS != c.wantSuggested {
					t.Errorf("%s: p99 %.1f ms: suggested %d ms, want %d", c.tool, f.P99MS, f.SuggestedTimeoutMS, c.wantSuggested)
				}
			}
			if f := rep.Tools["issue_refund"]; f.TimeoutMS != 5000 {
				t.Errorf("issue_refund timeout_ms = %d, want 5000", f.TimeoutMS)
			}
			if d := rep.Dependencies["payments"]; d == nil || d.TimeoutMS != 0 || d.TimeoutPressure || d.Calls != 200 {
				t.Errorf("payments figures %+v: want 200 calls and no timeout of its own", d)
			}
		})
	}
}

func TestSuggestTimeout(t *testing.T) {
	cases := []struct {
		p99  float64
		want int64
	}{
		{0, 100},
		{50, 100},      // 75 -> 100
		{240, 400},     // 360 -> 400
		{600, 900},     // 900 exactly: already round
		{666, 1000},    // 999 -> 1000
		{700, 1500},    // 1050 -> 1500
		{2900, 4500},   // 4350 -> 4500
		{6000, 9000},   // 9000: already round
		{6667, 11_000}, // 10000.5 -> 11 s
		{9000, 14_000}, // 13500 -> 14 s
		{40_000, 60_000},
	}
	for _, c := range cases {
		if got := SuggestTimeout(c.p99); got != c.want {
			t.Errorf("SuggestTimeout(%v) = %d, want %d", c.p99, got, c.want)
		}
	}
}

func TestPressure(t *testing.T) {
	cases := []struct {
		p95     float64
		timeout time.Duration
		want    bool
	}{
		{4000, 5 * time.Second, true},
		{3999.9, 5 * time.Second, false},
		{6000, 5 * time.Second, true},
		{100, 0, false},
	}
	for _, c := range cases {
		if got := Pressure(c.p95, c.timeout); got != c.want {
			t.Errorf("Pressure(%v, %s) = %v, want %v", c.p95, c.timeout, got, c.want)
		}
	}
}

func TestRatesCodesAndTokens(t *testing.T) {
	for _, source := range []Source{SourceRows, SourceSketch} {
		t.Run(string(source), func(t *testing.T) {
			clk := newClock()
			st := newStore(t, "memory", clk)
			mutate := func(*Config) {}
			if source == SourceSketch {
				mutate = sketchOnly
			}
			agg := newAgg(t, st, clk, "a", mutate)
			var rows []*types.Execution
			for k := range 10 {
				r := row("get_order", t0, 10)
				switch k {
				case 0, 1:
					r = failed("get_order", t0, 10, types.CodeUpstreamError)
				case 2:
					r = failed("get_order", t0, 10, types.CodeTimeout)
				}
				if k < 4 {
					r.Retries = []int{1, 1, 2, 3}[k]
					r.Attempts = 1 + r.Retries
				}
				r.InputTokens, r.OutputTokens = 100, 7
				rows = append(rows, r)
			}
			rows = append(rows, row("post_note", t0, 10), failed("made_up_tool", t0, 0, types.CodeUnknownTool))
			commitRows(t, st, rows)
			for _, r := range rows {
				agg.Record(r)
			}
			rep, err := agg.Query(t.Context(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			f := rep.Tools["get_order"]
			if f.Calls != 10 || f.Errors != 3 || f.ErrorRate != 0.3 {
				t.Errorf("calls %d, errors %d, error_rate %v; want 10, 3, 0.3", f.Calls, f.Errors, f.ErrorRate)
			}
			if f.Retried != 4 || f.RetryRate != 0.4 || f.Retries != 7 || f.Attempts != 17 {
				t.Errorf("retried %d, retry_rate %v, retries %d, attempts %d; want 4, 0.4, 7, 17", f.Retried, f.RetryRate, f.Retries, f.Attempts)
			}
			want := map[types.Code]int64{types.CodeOK: 7, types.CodeUpstreamError: 2, types.CodeTimeout: 1}
			if len(f.Codes) != len(want) {
				t.Errorf("codes %v, want %v", f.Codes, want)
			}
			for c, n := range want {
				if f.Codes[c] != n {
					t.Errorf("codes[%s] = %d, want %d", c, f.Codes[c], n)
				}
			}
			if f.InputTokens != 1000 || f.OutputTokens != 70 {
				t.Errorf("tokens %d in, %d out; want 1000, 70", f.InputTokens, f.OutputTokens)
			}
			if f.Dependency != "payments" {
				t.Errorf("dependency %q", f.Dependency)
			}
			if u := rep.Tools[UnknownTool]; u == nil || u.Calls != 1 || rep.Tools["made_up_tool"] != nil {
				t.Errorf("an unknown tool's call is counted under %q: %v", UnknownTool, rep.Tools)
			}
			if d := rep.Dependencies["payments"]; d.Calls != 11 || d.Errors != 4 {
				t.Errorf("payments: %d calls, %d errors; want 11 (with the unknown tool's), 4", d.Calls, d.Errors)
			}
			if d := rep.Dependencies["notes_api"]; d.Calls != 1 || d.ErrorRate != 0 {
				t.Errorf("notes_api: %+v", d)
			}
		})
	}
}

// TestStoresLoadBucketsInOrder saves, shuffled, the buckets of several
// tools and replicas (a tool whose buckets all end before the window
// included) and checks that every store loads those of the window, each
// once with its own data, ordered by start, tool and replica.
func TestStoresLoadBucketsInOrder(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			st := newStore(t, kind, newClock())
			r := rand.New(rand.NewPCG(9, 9))
			var all []store.StatsBucket
			for _, tool := range []string{"b_tool", UnknownTool, "a_tool", "c_tool", "old_tool"} {
				for _, replica := range []string{"r2", "r1", "r3"} {
					for m := range 40 {
						if tool == "old_tool" && m >= 10 || r.IntN(4) == 0 {
							continue // gaps: not every replica has every bucket
						}
						data := []byte(fmt.Sprintf("%s/%s/%d", tool, replica, m))
						if m%7 == 0 {
							data = bytes.Repeat(data, 100)
						}
						all = append(all, store.StatsBucket{Tool: tool, Replica: replica,
							Start: t0.Add(time.Duration(m) * time.Minute), Width: time.Minute, Data: data})
					}
				}
			}
			r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			if err := st.SaveStats(t.Context(), all); err != nil {
				t.Fatal(err)
			}
			since := t0.Add(20 * time.Minute)
			var want []store.StatsBucket
			for _, b := range all {
				if !b.Start.Before(since) {
					want = append(want, b)
				}
			}
			slices.SortFunc(want, func(x, y store.StatsBucket) int {
				return cmp.Or(x.Start.Compare(y.Start), strings.Compare(x.Tool, y.Tool), strings.Compare(x.Replica, y.Replica))
			})
			got, err := st.LoadStats(t.Context(), since)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d buckets loaded, want %d", len(got), len(want))
			}
			for i, g := range got {
				w := want[i]
				if !g.Start.Equal(w.Start) || g.Tool != w.Tool || g.Replica != w.Replica || !bytes.Equal(g.Data, w.Data) || g.Width != w.Width {
					t.Fatalf("bucket %d: %s %s %s %.20q, want %s %s %s %.20q", i, g.Start, g.Tool, g.Replica, g.Data, w.Start, w.Tool, w.Replica, w.Data)
				}
			}
		})
	}
}

func TestReplicasMergeThroughTheStore(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			clk := newClock()
			st := newStore(t, kind, clk)
			a := newAgg(t, st, clk, "replica-a", sketchOnly)
			b := newAgg(t, st, clk, "replica-b", sketchOnly)
			all := newAgg(t, newStore(t, "memory", clk), clk, "all", sketchOnly) // the one-process truth
			r := rand.New(rand.NewPCG(7, 7))
			record := func(agg *Aggregator, n int, at time.Time) {
				for range n {
					x := row("issue_refund", at, 100+r.ExpFloat64()*400)
					agg.Record(x)
					all.Record(x)
				}
			}
			record(a, 300, t0)
			record(b, 200, t0)
			record(b, 100, t0.Add(time.Minute))
			ctx := t.Context()
			for _, agg := range []*Aggregator{a, b} {
				if err := agg.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			record(a, 50, t0.Add(time.Minute)) // not flushed yet
			clk.Set(t0.Add(2 * time.Minute))

			calls := func(agg *Aggregator) *Figures {
				t.Helper()
				rep, err := agg.Query(ctx, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				return rep.Tools["issue_refund"]
			}
			if got := calls(a).Calls; got != 650 {
				t.Errorf("replica a sees %d calls, want 650 (its unflushed 50 included)", got)
			}
			if got := calls(b).Calls; got != 600 {
				t.Errorf("replica b sees %d calls, want 600 (a's last 50 are not flushed)", got)
			}
			// Flushing the same buckets again, and then querying, never
			// counts twice.
			for range 2 {
				if err := a.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			fa, fb, truth := calls(a), calls(b), calls(all)
			if fa.Calls != 650 || fb.Calls != 650 {
				t.Errorf("after flushing: a sees %d, b sees %d, want 650 both", fa.Calls, fb.Calls)
			}
			// The merged sketches are the sketch of all the calls.
			if fa.P50MS != truth.P50MS || fa.P95MS != truth.P95MS || fa.P99MS != truth.P99MS || fb.P99MS != truth.P99MS {
				t.Errorf("merged percentiles %v/%v/%v (b p99 %v), one-process %v/%v/%v",
					fa.P50MS, fa.P95MS, fa.P99MS, fb.P99MS, truth.P50MS, truth.P95MS, truth.P99MS)
			}
		})
	}
}

func TestSmallWindowsAreExactFromRows(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			clk := newClock()
			st := newStore(t, kind, clk)
			r := rand.New(rand.NewPCG(3, 9))
			var rows []*types.Execution
			var values []float64
			for k := range 200 {
				v := 1 + r.ExpFloat64()*300
				rows = append(rows, row("get_order", t0.Add(time.Duration(k)*time.Second), v))
				values = append(values, v)
			}
			old := row("get_order", t0.Add(-2*time.Hour), 99_999) // outside the window
			commitRows(t, st, append([]*types.Execution{old}, rows...))
			slices.Sort(values)
			clk.Set(t0.Add(200 * time.Second))

			cases := []struct {
				name      string
				exactRows int
				recorded  int // rows the aggregator saw
				want      Source
			}{
				{"within the limit", 0, 200, SourceRows},
				{"buckets over the limit", 150, 200, SourceSketch},
				{"rows over the limit", 150, 100, SourceSketch},
				{"rows disabled", -1, 200, SourceSketch},
			}
			for _, c := range cases {
				agg := newAgg(t, st, clk, "q-"+c.name, func(cfg *Config) { cfg.ExactRows = c.exactRows })
				for _, x := range rows[:c.recorded] {
					agg.Record(x)
				}
				rep, err := agg.Query(t.Context(), time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				f := rep.Tools["get_order"]
				if rep.Source != c.want || f.Source != c.want {
					t.Errorf("%s: source %q, want %q", c.name, rep.Source, c.want)
				}
				if c.want != SourceRows {
					continue
				}
				if f.Calls != 200 {
					t.Errorf("%s: %d calls, want 200 (the old row is outside the window)", c.name, f.Calls)
				}
				for _, q := range []struct{ q, got float64 }{{0.5, f.P50MS}, {0.95, f.P95MS}, {0.99, f.P99MS}} {
					if want := roundMS(exactQuantile(values, q.q)); q.got != want {
						t.Errorf("%s: p%v = %v, want exactly %v", c.name, q.q*100, q.got, want)
					}
				}
			}
		})
	}
}

func TestQueryRefusesBadWindows(t *testing.T) {
	clk := newClock()
	agg := newAgg(t, newStore(t, "memory", clk), clk, "a")
	for _, w := range []time.Duration{0, -time.Minute, MaxWindow + time.Hour} {
		if _, err := agg.Query(context.Background(), w); err == nil {
			t.Errorf("Query(%s) succeeded", w)
		}
	}
}
