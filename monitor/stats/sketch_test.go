package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// TestSketchAnswersLikeTheReference checks that our bins give, at every
// quantile, exactly the value the reference DDSketch (sketches-go, same
// mapping) gives.
func TestSketchAnswersLikeTheReference(t *testing.T) {
	for i, d := range distributions {
		t.Run(d.name, func(t *testing.T) {
			ref := ddsketch.NewDDSketch(latencyMapping, store.NewDenseStore(), store.NewDenseStore())
			ours := newSketch()
			r := rand.New(rand.NewPCG(uint64(i), 11))
			for k := range 20_000 {
				v := d.gen(r)
				if k%1000 == 0 {
					v = 0
				}
				ours.add(v)
				if err := ref.Add(max(v, 0)); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
				want, err := ref.GetValueAtQuantile(q)
				if err != nil {
					t.Fatal(err)
				}
				if got := ours.quantile(q); got != want {
					t.Errorf("q=%v: ours %v, reference %v", q, got, want)
				}
			}
		})
	}
}

func TestSketchMergeIsTheSketchOfTheUnion(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	a, b, all := newSketch(), newSketch(), newSketch()
	for k := range 10_000 {
		v := r.ExpFloat64() * 100
		if k%3 == 0 {
			v *= 1000 // a different range, so merging grows both ways
			b.add(v)
		} else {
			a.add(v)
		}
		all.add(v)
	}
	a.add(0)
	all.add(0)
	viaEncoding := newSketch()
	for _, s := range []*sketch{a, b} {
		r := reader{b: s.encode(nil)}
		viaEncoding.mergeEncoded(&r)
		if r.err != nil || len(r.b) != 0 {
			t.Fatalf("mergeEncoded: %v, %d bytes left", r.err, len(r.b))
		}
	}
	a.merge(b)
	for _, s := range []*sketch{a, viaEncoding} {
		if s.count != all.count || s.zero != all.zero || s.min != all.min || len(s.bins) != len(all.bins) {
			t.Fatalf("merged count %d zero %d bins [%d +%d], union %d %d [%d +%d]",
				s.count, s.zero, s.min, len(s.bins), all.count, all.zero, all.min, len(all.bins))
		}
		for j := range s.bins {
			if s.bins[j] != all.bins[j] {
				t.Fatalf("bin %d: %d, union %d", s.min+j, s.bins[j], all.bins[j])
			}
		}
	}
}

func TestSketchCapCollapsesTheLowestBins(t *testing.T) {
	s := newSketch()
	// Values spanning far more than MaxBins bins: 1e-6 ms to 1e30 ms.
	for e := -6.0; e <= 30; e += 0.01 {
		s.add(math.Pow(10, e))
	}
	if len(s.bins) > MaxBins {
		t.Fatalf("%d bins, cap %d", len(s.bins), MaxBins)
	}
	// The quantiles above the collapsed mass (about the lowest half of the
	// values here) keep their accuracy.
	n := float64(s.count)
	for _, q := range []float64{0.75, 0.95, 0.99} {
		want := math.Pow(10, -6+math.Floor(q*(n-1))*0.01)
		if got := s.quantile(q); math.Abs(got-want) > RelativeAccuracy*want*1.0001 {
			t.Errorf("q=%v: %g, want %g within 1%%", q, got, want)
		}
	}
	// Adding below the kept range lands in the lowest bin, not a new one.
	before := len(s.bins)
	s.add(1e-9)
	if len(s.bins) != before || s.bins[0] < 2 {
		t.Errorf("a value below the kept range grew the bins to %d", len(s.bins))
	}
	// Merging keeps the cap.
	s.merge(s.clone())
	if len(s.bins) > MaxBins {
		t.Fatalf("%d bins after a merge", len(s.bins))
	}
}

func TestSketchOddInputs(t *testing.T) {
	s := newSketch()
	for _, v := range []float64{-5, math.NaN(), 0, math.Inf(1), 1e308} {
		s.add(v)
	}
	if s.count != 5 || s.zero != 3 {
		t.Fatalf("count %d, zero %d; want 5 and 3 (negative, NaN and 0)", s.count, s.zero)
	}
	if got := s.quantile(1); math.IsInf(got, 0) || math.IsNaN(got) {
		t.Fatalf("max %v", got)
	}
	var empty *sketch
	if empty.quantile(0.5) != 0 || newSketch().quantile(0.99) != 0 {
		t.Fatal("an empty sketch has no latency")
	}
}
