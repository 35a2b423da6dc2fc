package load

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(100-i) * time.Microsecond // unsorted on purpose
	}
	p50, p90, p99, mean := summarise(lat)
	if p50 != 50*time.Microsecond || p90 != 90*time.Microsecond || p99 != 99*time.Microsecond {
		t.Errorf("p50 %v, p90 %v, p99 %v", p50, p90, p99)
	}
	if mean != 50500*time.Nanosecond {
		t.Errorf("mean %v", mean)
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("no sample: %v", got)
	}
}

func TestRotate(t *testing.T) {
	got := rotate(roundOrder, 1)
	want := []Path{Read, Write, Direct, Proxy}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rotate: %v, want %v", got, want)
		}
	}
}
