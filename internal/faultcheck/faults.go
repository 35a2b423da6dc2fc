package faultcheck

import (
	"fmt"
	"math/rand/v2"
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

// RandomSchedule picks dependency faults and their timing from seed: each
// fault after 0.5-3 s of quiet, on for 0.3-6 s. The same seed gives the
// same faults in the same order with the same timing.
func RandomSchedule(seed uint64, p *faultproxy.Proxy) func(i int) *Fault {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	return func(int) *Fault {
		name := DependencyFaults[rng.IntN(len(DependencyFaults))]
		gap := 500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond)))
		hold := 300*time.Millisecond + time.Duration(rng.Int64N(int64(5700*time.Millisecond)))
		f, _ := ProviderFault(p, name, gap.Round(time.Millisecond), hold.Round(time.Millisecond))
		return f
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
