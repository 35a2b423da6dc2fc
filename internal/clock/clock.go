// Package clock lets toolgate's policies take time and randomness as inputs,
// so that tests advance a fake clock instead of sleeping.
package clock

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Clock tells the time and waits.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever is first, and
	// returns ctx.Err() in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Sleep waits on a timer that is stopped when ctx ends first.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fake is a clock that only moves when told to. Sleep advances it at once by
// the duration asked, and records the sleep, so code that backs off runs
// instantly and deterministically in tests.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFake returns a fake clock set at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Sleep advances the clock by d and returns at once (or ctx.Err()).
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	f.mu.Unlock()
	return nil
}

// Sleeps returns the durations Sleep was asked for, in order.
func (f *Fake) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// Rand is a source of uniform numbers in [0, 1), safe for concurrent use.
type Rand interface {
	Float64() float64
}

// NewRand returns a concurrency-safe random source seeded from the runtime.
func NewRand() Rand { return globalRand{} }

type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// FixedRand always returns the same number: for tests of jitter bounds.
type FixedRand float64

// Float64 returns the fixed number.
func (r FixedRand) Float64() float64 { return float64(r) }
