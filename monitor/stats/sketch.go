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

// quantile is the latency (ms) at the nearest rank ceil(q·count) (see
// NearestRank), within RelativeAccuracy; 0 for an empty sketch.
func (s *sketch) quantile(q float64) float64 {
	if s == nil || s.count == 0 {
		return 0
	}
	rank := uint64(NearestRank(q, int64(s.count)))
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

// mergeEncoded adds an encoded sketch, the whole of r.b, to s and reads r
// to its end. On corrupt input (bytes after the sketch included) r.err is
// set and s is left unchanged.
//
// It is the inner loop of a query: a day of one-minute buckets is a few
// hundred thousand bins. So it decodes from local slices (advancing r.b
// itself, a write through a pointer, would cost a GC write barrier per
// varint while a collection runs), and when s's bins already cover the
// encoded ones, as they soon do in a query's accumulator, it adds each bin
// as it decodes it (addEncodedBins) instead of collecting them first.
func (s *sketch) mergeEncoded(r *reader) {
	zero := r.uint()
	n := r.uint()
	if r.err != nil || n > int64(len(r.b)) {
		r.fail()
		return
	}
	if n == 0 {
		if len(r.b) != 0 {
			r.fail()
			return
		}
		s.zero += uint64(zero)
		s.count += uint64(zero)
		return
	}
	b := r.b
	first, w := binary.Varint(b)
	if w <= 0 || first < math.MinInt32 || first > math.MaxInt32 {
		r.fail()
		return
	}
	b = b[w:]
	if off := int(first) - s.min; len(s.bins) != 0 && off >= 0 && off < len(s.bins) {
		bins := s.bins[off:]
		k, pos, sum := addEncodedBins(bins, b, n)
		if k == n && pos == len(b) {
			s.zero += uint64(zero)
			s.count += uint64(zero) + sum
			r.b = b[pos:]
			return
		}
		// A bin past s's or corrupt input: take back the bins added and
		// go the general way, which tells the two apart.
		subEncodedBins(bins, b, k)
	}
	s.mergeDecoded(r, uint64(zero), n, first, b)
}

// addEncodedBins adds the n encoded bins in b (after the first index, which
// is bins[0]'s) to bins while they decode and fall in bins. It returns how
// many it added, the position after them in b and the sum of their counts.
func addEncodedBins(bins []uint64, b []byte, n int64) (added int64, pos int, sum uint64) {
	c, pos := uvarintAt(b, 0)
	if pos < 0 || c > 1<<62 {
		return 0, 0, 0
	}
	bins[0] += c
	sum = c
	j, k := 0, int64(1)
	for k < n {
		// The common bin, one byte of index delta (not 0) and one of
		// count, in a loop of its own: without calls, its variables stay
		// in registers, and the compiler proves its indexes in bounds.
		for ; k < n && pos >= 0 && pos < len(b)-1; k++ {
			d, c := uint(b[pos]), uint64(b[pos+1])
			if d-1 >= 0x7f || c >= 0x80 {
				break
			}
			if uint(j)+d >= uint(len(bins)) {
				return k, pos, sum
			}
			j += int(d)
			bins[j] += c
			sum += c
			pos += 2
		}
		if k == n {
			break
		}
		d, p := uvarintAt(b, pos)
		if p < 0 || d == 0 || d >= uint64(len(bins)-j) {
			break
		}
		if c, p = uvarintAt(b, p); p < 0 || c > 1<<62 {
			break
		}
		j += int(d)
		bins[j] += c
		sum += c
		pos = p
		k++
	}
	return k, pos, sum
}

// subEncodedBins takes back the first k bins of b that addEncodedBins
// added to bins.
func subEncodedBins(bins []uint64, b []byte, k int64) {
	j, pos := 0, 0
	for m := int64(0); m < k; m++ {
		var d, c uint64
		if m > 0 {
			d, pos = uvarintAt(b, pos)
		}
		c, pos = uvarintAt(b, pos)
		j += int(d)
		bins[j] -= c
	}
}

// mergeDecoded is mergeEncoded's general way, for bins that s's do not
// cover: it decodes and checks every bin (into s.scratch), grows s's bins
// once for their range and then adds them. b holds the bins after the
// first index.
func (s *sketch) mergeDecoded(r *reader, zero uint64, n, first int64, b []byte) {
	pairs := s.scratch[:0]
	i, pos := first, 0
	for k := int64(0); k < n; k++ {
		if k > 0 {
			d, p := uvarintAt(b, pos)
			if p < 0 || d == 0 || d > MaxBins*1024 {
				pos = -1
				break
			}
			pos = p
			i += int64(d)
		}
		c, p := uvarintAt(b, pos)
		if p < 0 || c > 1<<62 {
			pos = -1
			break
		}
		pos = p
		pairs = append(pairs, bin{int(i), c})
	}
	s.scratch = pairs[:0]
	if pos != len(b) || i > math.MaxInt32 {
		r.fail()
		return
	}
	r.b = b[pos:]
	s.zero += zero
	s.count += zero
	lo, hi := pairs[0].index, pairs[len(pairs)-1].index
	s.addAt(lo, 0) // make room for the whole range once
	s.addAt(hi, 0)
	if lo < s.min { // the cap folded the lowest bins
		for _, p := range pairs {
			s.addAt(p.index, p.count)
		}
		return
	}
	bins := s.bins[lo-s.min : hi-s.min+1]
	var sum uint64
	for _, p := range pairs {
		bins[p.index-lo] += p.count
		sum += p.count
	}
	s.count += sum
}

// uvarintAt decodes the uvarint at b[pos:] and returns it and the position
// after it, or a negative position if there is none.
func uvarintAt(b []byte, pos int) (uint64, int) {
	if pos < 0 || pos >= len(b) {
		return 0, -1
	}
	v, w := binary.Uvarint(b[pos:])
	if w <= 0 {
		return 0, -1
	}
	return v, pos + w
}

// bin is one decoded bin.
type bin struct {
	index int
	count uint64
}
