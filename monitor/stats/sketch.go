package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// RelativeAccuracy is the sketch's guarantee: a percentile it returns is
// within 1% of the true latency at that rank.
const RelativeAccuracy = 0.01

// MaxBins caps the bins of one sketch. Past it the lowest bins are folded
// into the lowest bin kept (see the package documentation).
const MaxBins = 2048

// latencyMapping maps a latency (ms) to its bin and back: DDSketch's
// logarithmic mapping, gamma = (1+α)/(1−α), from sketches-go.
var latencyMapping = func() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(RelativeAccuracy)
	if err != nil {
		panic(fmt.Sprintf("stats: %v", err)) // only for an accuracy outside (0, 1)
	}
	return m
}()

// sketch is a DDSketch of latencies in milliseconds: integer counts in
// contiguous bins of latencyMapping, plus the count of zero latencies.
// Merging adds counts bin by bin, so the merge of two sketches is exactly
// the sketch of all their values.
type sketch struct {
	zero  uint64   // latencies too small to index (0 ms)
	count uint64   // zero + every bin
	min   int      // the bin index of bins[0]
	bins  []uint64 // counts of bins min, min+1, ...

	scratch []bin // reused by mergeEncoded (query accumulators only)
}

func newSketch() *sketch { return &sketch{} }

// add records one latency in ms. Negative latencies (a clock that stepped
// back) and NaN count as zero.
func (s *sketch) add(ms float64) {
	switch {
	case !(ms > latencyMapping.MinIndexableValue()): // also NaN
		s.zero++
		s.count++
	default:
		s.addAt(latencyMapping.Index(min(ms, latencyMapping.MaxIndexableValue())), 1)
	}
}

// addAt adds n to bin i, growing the bins; past MaxBins the lowest bins
// are folded into the lowest one kept.
func (s *sketch) addAt(i int, n uint64) {
	s.count += n
	if len(s.bins) == 0 {
		s.min, s.bins = i, append(s.bins[:0], n)
		return
	}
	top := s.min + len(s.bins) - 1
	switch {
	case i > top:
		if span := i - s.min + 1; span > MaxBins {
			s.foldBelow(i - MaxBins + 1)
		}
		s.bins = append(s.bins, make([]uint64, i-(s.min+len(s.bins)-1))...)
	case i < s.min:
		if span := top - i + 1; span > MaxBins {
			i = top - MaxBins + 1 // collapse into the lowest bin kept
		}
		if i < s.min {
			s.bins = slices.Insert(s.bins, 0, make([]uint64, s.min-i)...)
			s.min = i
		}
	}
	s.bins[i-s.min] += n
}

// foldBelow adds every bin below index lo into bin lo and drops them.
func (s *sketch) foldBelow(lo int) {
	k := lo - s.min
	if k <= 0 {
		return
	}
	if k >= len(s.bins) {
		var sum uint64
		for _, c := range s.bins {
			sum += c
		}
		s.min, s.bins = lo, append(s.bins[:0], sum)
		return
	}
	var sum uint64
	for _, c := range s.bins[:k] {
		sum += c
	}
	s.bins = append(s.bins[:0], s.bins[k:]...)
	s.bins[0] += sum
	s.min = lo
}

// merge adds o's counts to s.
func (s *sketch) merge(o *sketch) {
	s.zero += o.zero
	s.count += o.zero
	if len(o.bins) == 0 {
		return
	}
	// Make room once for o's range, then add bin by bin.
	s.addAt(o.min, 0)
	s.addAt(o.min+len(o.bins)-1, 0)
	for j, c := range o.bins {
		if c != 0 {
			s.addAt(o.min+j, c)
		}
	}
}

func (s *sketch) clone() *sketch {
	c := *s
	c.bins = slices.Clone(s.bins)
	c.scratch = nil
	return &c
}

// quantile is the latency (ms) at rank floor(q·(count−1)), within
// RelativeAccuracy; 0 for an empty sketch.
func (s *sketch) quantile(q float64) float64 {
	if s == nil || s.count == 0 {
		return 0
	}
	rank := uint64(q * float64(s.count-1))
	if rank < s.zero {
		return 0
	}
	seen := s.zero
	for j, c := range s.bins {
		seen += c
		if seen > rank {
			return latencyMapping.Value(s.min + j)
		}
	}
	return latencyMapping.Value(s.min + len(s.bins) - 1)
}

// The sketch's encoding: uvarint zero count, uvarint number of non-empty
// bins, then for the first: varint index, uvarint count; for each next:
// uvarint index delta, uvarint count.
func (s *sketch) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, s.zero)
	n := 0
	for _, c := range s.bins {
		if c != 0 {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	prev, first := 0, true
	for j, c := range s.bins {
		if c == 0 {
			continue
		}
		if i := s.min + j; first {
			b = binary.AppendVarint(b, int64(i))
			first = false
			prev = i
		} else {
			b = binary.AppendUvarint(b, uint64(i-prev))
			prev = i
		}
		b = binary.AppendUvarint(b, c)
	}
	return b
}

// mergeEncoded adds an encoded sketch to s; it reads r to the sketch's
// end. On corrupt input r.err is set and s is left unchanged.
func (s *sketch) mergeEncoded(r *reader) {
	zero := r.uint()
	n := r.uint()
	if r.err != nil || n > int64(len(r.b)) {
		r.fail()
		return
	}
	if n == 0 {
		s.zero += uint64(zero)
		s.count += uint64(zero)
		return
	}
	// Decode and check every bin first (into s.scratch), then add them.
	pairs := s.scratch[:0]
	i := r.int()
	for k := int64(0); k < n; k++ {
		if k > 0 {
			d, w := binary.Uvarint(r.b)
			if w <= 0 || d == 0 || d > MaxBins*1024 {
				r.fail()
				break
			}
			r.b = r.b[w:]
			i += int64(d)
		}
		c, w := binary.Uvarint(r.b)
		if w <= 0 || c > 1<<62 {
			r.fail()
			break
		}
		r.b = r.b[w:]
		pairs = append(pairs, bin{int(i), c})
	}
	s.scratch = pairs[:0]
	if r.err != nil || pairs[0].index < math.MinInt32 || i > math.MaxInt32 {
		r.fail()
		return
	}
	s.zero += uint64(zero)
	s.count += uint64(zero)
	s.addAt(pairs[0].index, 0) // make room for the whole range once
	s.addAt(pairs[len(pairs)-1].index, 0)
	if pairs[0].index < s.min { // the cap folded the lowest bins
		for _, p := range pairs {
			s.addAt(p.index, p.count)
		}
		return
	}
	for _, p := range pairs {
		s.bins[p.index-s.min] += p.count
		s.count += p.count
	}
}

// bin is one decoded bin.
type bin struct {
	index int
	count uint64
}
