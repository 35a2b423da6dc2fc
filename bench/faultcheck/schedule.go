package faultcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/types"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x70016a7e)) }

// faults applies the schedule's faults one after another, each followed by
// a recovery probe, until the schedule ends or Duration has passed.
func (rn *runner) faults(ctx context.Context, proxy *faultproxy.Proxy) ([]FaultResult, error) {
	next := rn.o.Schedule(proxy)
	start := time.Now()
	if err := wait(ctx, rn.o.Warmup); err != nil {
		return nil, err
	}
	var out []FaultResult
	for i := 0; ; i++ {
		if rn.o.Duration > 0 && time.Since(start) >= rn.o.Duration {
			break
		}
		f := next(i)
		if f == nil {
			break
		}
		if err := wait(ctx, f.Gap); err != nil {
			return out, err
		}
		fr := FaultResult{Name: f.Name, On: time.Now()}
		if err := f.Apply(); err != nil {
			return out, fmt.Errorf("faultcheck: %s: %w", f.Name, err)
		}
		if err := wait(ctx, f.Hold); err != nil {
			return out, err
		}
		if err := f.Heal(); err != nil {
			return out, fmt.Errorf("faultcheck: heal %s: %w", f.Name, err)
		}
		fr.Off = time.Now()
		fr.Recovery, fr.Recovered = rn.probe(ctx, i)
		out = append(out, fr)
		if rn.o.Progress != nil {
			fmt.Fprintf(rn.o.Progress, "fault %d: %s on %s, recovered in %s (ok=%v)\n", i+1, f.Name,
				f.Hold, fr.Recovery.Round(time.Millisecond), fr.Recovered)
		}
	}
	// The promises about what a fault left behind (nothing started, the
	// kept outcomes written) hold from RecoveryLimit after its end: the
	// load goes on until then, and Cooldown more.
	quiet := rn.o.Cooldown
	if n := len(out); n > 0 {
		quiet = max(quiet, time.Until(out[n-1].Off.Add(RecoveryLimit)))
	}
	return out, wait(ctx, quiet)
}

// wait waits d or until ctx ends: the schedule's timing is the point.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probe sends new writes, one after another, from the moment a fault
// ends until one succeeds: it returns how long that took, and false if
// none did within three times RecoveryLimit.
func (rn *runner) probe(ctx context.Context, fault int) (time.Duration, bool) {
	off := time.Now()
	c := &caller{id: 99, run: rn.runs[len(rn.runs)-1], cl: rn.cl, h: rn.h}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for n := 1; time.Since(off) < 3*RecoveryLimit; n++ {
		call := &Call{ID: fmt.Sprintf("probe-%04d-%03d", fault, n), Run: c.run, Tool: ToolKeyed}
		call.Order, call.Amount = rn.h.newOrder()
		rn.cl.call(ctx, call)
		rn.h.add(call)
		if call.Code() == types.CodeOK && call.Answered() {
			return time.Since(off), true
		}
		select {
		case <-ctx.Done():
			return time.Since(off), false
		case <-tick.C:
		}
	}
	return time.Since(off), false
}

// reconcile runs `toolgate reconcile` beside the server; it returns how
// many operations it settled.
func (rn *runner) reconcile(ctx context.Context) (int, error) {
	cmd := exec.CommandContext(ctx, rn.bin, "reconcile", "--config", rn.cfg, "--json", "--limit", "1000000")
	// A race-enabled binary sleeps a second at exit unless told not to.
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("faultcheck: toolgate reconcile: %w\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var got struct {
		Operations []struct {
			Code types.Code `json:"code"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		return 0, fmt.Errorf("faultcheck: toolgate reconcile --json: %w\n%s", err, stdout.Bytes())
	}
	settled := 0
	for _, op := range got.Operations {
		if op.Code == types.CodeOK {
			settled++
		}
	}
	return settled, nil
}

// judgeFaults checks every fault's recovery, and that no call sent well
// after the last fault's end was refused duplicate_in_flight.
func (r *Result) judgeFaults(calls []*Call) {
	for i, f := range r.Faults {
		r.WorstRecovery = max(r.WorstRecovery, f.Recovery)
		if !f.Recovered || f.Recovery > RecoveryLimit {
			r.violate("fault %d (%s, off at %s): no write succeeded within %s of its end (%s)", i+1, f.Name,
				f.Off.Format("15:04:05.000"), RecoveryLimit, f.Recovery.Round(time.Millisecond))
		}
	}
	for _, c := range calls {
		if c.Code() != types.CodeDuplicateInFlight || r.duringFault(c.Sent) {
			continue
		}
		r.LateInFlight++
		r.violate("call %s (%s %s) sent at %s, more than %s after any fault, answered duplicate_in_flight",
			c.ID, c.Tool, c.Order, c.Sent.Format("15:04:05.000"), RecoveryLimit)
	}
}

// duringFault says whether t falls while a fault was on or within
// RecoveryLimit of its end.
func (r *Result) duringFault(t time.Time) bool {
	for _, f := range r.Faults {
		if !t.Before(f.On) && t.Before(f.Off.Add(RecoveryLimit)) {
			return true
		}
	}
	return false
}
