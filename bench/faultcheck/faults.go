package faultcheck

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/faultproxy"
)

// Fault is one fault of a run's schedule: after Gap of quiet, Apply puts
// it on, it stays on for Hold, and Heal takes it off.
type Fault struct {
	// Name says what the fault is ("provider blackhole").
	Name string
	// Gap is the quiet time before it; Hold how long it stays on.
	Gap, Hold   time.Duration
	Apply, Heal func() error
}

// Dependency faults by name, as ProviderFault takes them.
const (
	FaultLatency     = "latency"
	FaultBlackhole   = "blackhole"
	FaultDropAnswers = "drop-answers"
	FaultReset       = "reset"
	FaultRefuse      = "refuse"
	FaultTrickle     = "trickle"
	FaultTruncate    = "truncate"
)

// DependencyFaults are the faults ProviderFault knows, in a fixed order.
var DependencyFaults = []string{FaultLatency, FaultBlackhole, FaultDropAnswers, FaultReset, FaultRefuse, FaultTrickle, FaultTruncate}

// ProviderFault is the named fault of the proxy in front of the provider:
// latency adds 1.5 s to every answer (past the read timeout), trickle lets
// 100 bytes a second through, truncate cuts each connection after 150
// bytes of answers (inside the first answer's body).
func ProviderFault(p *faultproxy.Proxy, name string, gap, hold time.Duration) (*Fault, error) {
	f := &Fault{Name: "dependency " + name, Gap: gap, Hold: hold, Heal: p.Heal}
	switch name {
	case FaultLatency:
		f.Apply = func() error { return p.Latency(1500 * time.Millisecond) }
	case FaultBlackhole:
		f.Apply = p.Blackhole
	case FaultDropAnswers:
		f.Apply = p.DropAnswers
	case FaultReset:
		f.Apply = p.Reset
	case FaultRefuse:
		f.Apply = p.Refuse
	case FaultTrickle:
		f.Apply = func() error { return p.Trickle(100) }
	case FaultTruncate:
		f.Apply = func() error { return p.Truncate(150) }
	default:
		return nil, fmt.Errorf("faultcheck: no dependency fault %q", name)
	}
	return f, nil
}

// Maker makes one fault with the given timing.
type Maker func(gap, hold time.Duration) *Fault

// RandomSchedule picks faults and their timing from seed: each fault
// after 0.5-3 s of quiet, on for 0.3-6 s, drawn evenly from the seven
// dependency faults and extra. The same seed gives the same faults in the
// same order with the same timing.
func RandomSchedule(seed uint64, p *faultproxy.Proxy, extra ...Maker) func(i int) *Fault {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	return func(int) *Fault {
		pick := rng.IntN(len(DependencyFaults) + len(extra))
		gap := (500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond)))).Round(time.Millisecond)
		hold := (300*time.Millisecond + time.Duration(rng.Int64N(int64(5700*time.Millisecond)))).Round(time.Millisecond)
		if pick >= len(DependencyFaults) {
			return extra[pick-len(DependencyFaults)](gap, hold)
		}
		f, _ := ProviderFault(p, DependencyFaults[pick], gap, hold)
		return f
	}
}

// DiskFull makes the fault of a full disk: Apply fills the file system
// holding dir with a file of zeros until it has no space left, Heal
// removes the file.
func DiskFull(dir string) Maker {
	filler := filepath.Join(dir, "faultcheck-filler")
	return func(gap, hold time.Duration) *Fault {
		return &Fault{Name: "sqlite disk full", Gap: gap, Hold: hold,
			Apply: func() error { return fill(filler) },
			Heal:  func() error { return os.Remove(filler) }}
	}
}

// fill writes zeros to path until the file system is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return f.Sync()
			}
			return fmt.Errorf("faultcheck: fill %s: %w", path, err)
		}
	}
}

// FixedSchedule applies faults one after another, then ends.
func FixedSchedule(faults ...*Fault) func(i int) *Fault {
	return func(i int) *Fault {
		if i < len(faults) {
			return faults[i]
		}
		return nil
	}
}

// FaultResult is what happened around one fault.
type FaultResult struct {
	Name string
	// On is when it was put on, Off when it was taken off.
	On, Off time.Time
	// Recovery is how long after Off a new write first succeeded;
	// Recovered is false when none did within RecoveryLimit*3.
	Recovery  time.Duration
	Recovered bool
}

// RecoveryLimit is how soon after a fault's end calls must succeed again.
const RecoveryLimit = 5 * time.Second
