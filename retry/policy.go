package retry

import (
	"math"
	"time"
)

// The defaults of a Policy's zero fields.
const (
	// DefaultMaxAttempts is Policy.MaxAttempts when zero.
	DefaultMaxAttempts = 4
	// DefaultBase is Policy.Base when zero.
	DefaultBase = time.Second
	// DefaultCap is Policy.Cap when zero.
	DefaultCap = 30 * time.Second
)

// Policy is a tool's retry policy (the pipeline converts a tool's
// retry keys into it). Every zero field means its default.
type Policy struct {
	// MaxAttempts counts the first attempt too. Default 4
	// (DefaultMaxAttempts).
	MaxAttempts int
	// Base is the wait after the first failed attempt, before jitter.
	// Default 1s (DefaultBase).
	Base time.Duration
	// Cap bounds the exponential part of any one wait. Default 30s
	// (DefaultCap).
	Cap time.Duration
}

// withDefaults replaces zero (or negative) fields with the defaults.
func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	return p
}

// Backoff is the wait before attempt n+1 after n failed attempts (n >= 1;
// smaller n counts as 1):
//
//	min(Base * 2^(n-1), Cap) * (0.5 + rnd)
//
// where rnd is a uniform draw in [0, 1), so the jitter factor lies in
// [0.5, 1.5). Values of rnd outside [0, 1) are clamped. The doubling stops at
// Cap, so a large n cannot overflow.
func Backoff(p Policy, n int, rnd float64) time.Duration {
	p = p.withDefaults()
	if n < 1 {
		n = 1
	}
	wait := p.Base
	for i := 1; i < n && wait < p.Cap; i++ {
		if wait > p.Cap/2 {
			wait = p.Cap
			break
		}
		wait *= 2
	}
	wait = min(wait, p.Cap)

	switch {
	case rnd < 0 || math.IsNaN(rnd):
		rnd = 0
	case rnd >= 1:
		rnd = math.Nextafter(1, 0)
	}
	jittered := float64(wait) * (0.5 + rnd)
	if jittered >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(jittered)
}
