package retry

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/clock"
)

// TestPolicyDefaults: a zero field of a Policy means its documented
// default; a set field is kept.
func TestPolicyDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Policy
		want Policy
	}{
		{"zero means defaults", Policy{}, Policy{MaxAttempts: 4, Base: time.Second, Cap: 30 * time.Second}},
		{"negative means defaults", Policy{MaxAttempts: -1, Base: -1, Cap: -1}, Policy{MaxAttempts: DefaultMaxAttempts, Base: DefaultBase, Cap: DefaultCap}},
		{"set values kept", Policy{MaxAttempts: 2, Base: 100 * time.Millisecond, Cap: time.Second},
			Policy{MaxAttempts: 2, Base: 100 * time.Millisecond, Cap: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.withDefaults(); got != tt.want {
				t.Errorf("withDefaults = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	p := Policy{Base: time.Second, Cap: 30 * time.Second}
	low, high := clock.FixedRand(0), clock.FixedRand(0.999)
	tests := []struct {
		name string
		p    Policy
		n    int
		rnd  float64
		want time.Duration
	}{
		{"first, lowest jitter is half", p, 1, low.Float64(), 500 * time.Millisecond},
		{"first, highest jitter is ~1.5x", p, 1, high.Float64(), 1499 * time.Millisecond},
		{"second doubles", p, 2, low.Float64(), time.Second},
		{"fourth", p, 4, 0.5, 8 * time.Second},
		{"capped", p, 6, 0.5, 30 * time.Second},
		{"capped, lowest jitter", p, 6, low.Float64(), 15 * time.Second},
		{"capped, highest jitter", p, 6, high.Float64(), 44970 * time.Millisecond},
		{"huge n does not overflow", p, 1000, 0.5, 30 * time.Second},
		{"max int n", p, math.MaxInt, 0.5, 30 * time.Second},
		{"n below 1 counts as 1", p, 0, 0.5, time.Second},
		{"rnd below 0 clamped", p, 1, -3, 500 * time.Millisecond},
		{"zero policy uses defaults", Policy{}, 2, 0.5, 2 * time.Second},
		{"cap below base", Policy{Base: 10 * time.Second, Cap: 3 * time.Second}, 1, 0.5, 3 * time.Second},
		{"huge cap saturates", Policy{Base: time.Duration(1 << 61), Cap: time.Duration(math.MaxInt64)}, 10, 0.999, time.Duration(math.MaxInt64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Backoff(tt.p, tt.n, tt.rnd); got != tt.want {
				t.Errorf("Backoff(n=%d, rnd=%v) = %v, want %v", tt.n, tt.rnd, got, tt.want)
			}
		})
	}
}

func TestBackoffBoundsEveryAttempt(t *testing.T) {
	p := Policy{Base: 200 * time.Millisecond, Cap: 5 * time.Second}
	for n := 1; n <= 40; n++ {
		base := min(p.Base<<min(n-1, 30), p.Cap)
		lo, hi := Backoff(p, n, 0), Backoff(p, n, 0.999)
		if lo != base/2 {
			t.Errorf("n=%d: lowest = %v, want %v", n, lo, base/2)
		}
		if hi < base*149/100 || hi >= base*3/2 {
			t.Errorf("n=%d: highest = %v, want in [%v, %v)", n, hi, base*149/100, base*3/2)
		}
	}
}

func ExampleBackoff() {
	p := Policy{Base: time.Second, Cap: 30 * time.Second}
	for n := 1; n <= 6; n++ {
		fmt.Println(n, Backoff(p, n, 0.5))
	}
	// Output:
	// 1 1s
	// 2 2s
	// 3 4s
	// 4 8s
	// 5 16s
	// 6 30s
}
