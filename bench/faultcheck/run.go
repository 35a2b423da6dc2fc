package faultcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/store/storeurl"
)

// Options shape one fault run. Zero values are the documented defaults.
type Options struct {
	// Binary is the toolgate binary. Required.
	Binary string
	// Dir holds the config (and the SQLite file by default). Required.
	Dir string
	// Store is the config's store: string. Default "sqlite:Dir/toolgate.db".
	Store string
	// Callers is how many callers send calls at once. Default 8.
	Callers int
	// Pace is the time between the starts of one caller's calls. Default
	// 50ms.
	Pace time.Duration
	// Warmup is the load before the first fault, and Cooldown after the
	// last one's recovery (at least until RecoveryLimit after its end).
	// Default 500ms each.
	Warmup, Cooldown time.Duration
	// Schedule returns the i-th fault (from 0), nil when there is no more.
	// Given the proxy in front of the provider.
	Schedule func(p *faultproxy.Proxy) func(i int) *Fault
	// Duration, when set, stops scheduling faults once it has passed.
	Duration time.Duration
	// Progress, when set, gets a line per fault.
	Progress io.Writer
	// MCP adds the provider's MCP server as a dependency, behind the same
	// proxy, and its refund tool to the writes.
	MCP bool
}

// Result is a finished fault run.
type Result struct {
	*Report
	Faults []FaultResult
	// WorstRecovery is the longest recovery of all faults.
	WorstRecovery time.Duration
	// LateInFlight: calls sent more than RecoveryLimit after the last
	// fault's end (none on since) answered duplicate_in_flight.
	LateInFlight int
	// Reconciled: operations `toolgate reconcile` reported settled.
	Reconciled int
	// Took is the run's length.
	Took time.Duration
}

// Failed says whether the run broke a promise.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// Run runs one fault run: see the package comment.
func Run(ctx context.Context, o Options) (*Result, error) {
	began := time.Now()
	if o.Binary == "" || o.Dir == "" || o.Schedule == nil {
		return nil, errors.New("faultcheck: Binary, Dir and Schedule are required")
	}
	if o.Store == "" {
		o.Store = "sqlite:" + filepath.Join(o.Dir, "toolgate.db")
	}
	o.Callers = cmpOr(o.Callers, 8)
	o.Pace = cmpOr(o.Pace, 50*time.Millisecond)
	o.Warmup = cmpOr(o.Warmup, 500*time.Millisecond)
	o.Cooldown = cmpOr(o.Cooldown, 500*time.Millisecond)

	prov, err := StartProvider()
	if err != nil {
		return nil, err
	}
	defer prov.Close()
	proxy, err := faultproxy.Start(prov.Addr())
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	cfg := filepath.Join(o.Dir, "toolgate.yaml")
	if err := os.WriteFile(cfg, []byte(Config(o.Store, "http://"+proxy.Addr(), o.MCP)), 0o600); err != nil {
		return nil, err
	}
	srv, err := serveproc.Start(ctx, serveproc.Options{Binary: o.Binary, Config: cfg, Args: []string{"--log-level", "warn"}})
	if err != nil {
		return nil, err
	}
	defer srv.Stop(time.Minute)

	rn := &runner{o: o, cl: newClient(srv.URL), h: &History{}, cfg: cfg, bin: o.Binary, prov: prov}
	defer rn.cl.http.CloseIdleConnections()
	res, err := rn.run(ctx, proxy)
	if err != nil {
		return nil, err
	}
	if n := srv.Races() + srv.Panics(); n > 0 {
		res.violate("toolgate reported %d data race(s) or panic(s):\n%s", n, srv.Stderr())
	}
	if err := srv.Stop(time.Minute); err != nil {
		res.violate("toolgate did not stop cleanly: %v", err)
	}
	res.Took = time.Since(began)
	return res, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// runner is one run in progress.
type runner struct {
	o    Options
	cl   *client
	h    *History
	cfg  string
	bin  string
	prov *Provider
	runs []string
}

// run drives the load and the faults, reconciles and checks.
func (rn *runner) run(ctx context.Context, proxy *faultproxy.Proxy) (*Result, error) {
	for i := range rn.o.Callers + 1 {
		run := fmt.Sprintf("fault-%02d", i) // the last one is the probe's
		if err := rn.cl.createRun(ctx, run); err != nil {
			return nil, err
		}
		rn.runs = append(rn.runs, run)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range rn.o.Callers {
		c := &caller{id: i, run: rn.runs[i], rng: newRand(uint64(i)), cl: rn.cl, h: rn.h, mcp: rn.o.MCP}
		wg.Go(func() { c.loop(loadCtx, rn.o.Pace) })
	}
	faults, faultErr := rn.faults(ctx, proxy)
	stopLoad()
	wg.Wait()
	if faultErr != nil {
		return nil, faultErr
	}
	res := &Result{Faults: faults}
	settled, err := rn.reconcile(ctx)
	if err != nil {
		return nil, err
	}
	res.Reconciled = settled
	st, err := storeurl.Open(ctx, rn.o.Store, storeurl.Options{})
	if err != nil {
		return nil, fmt.Errorf("faultcheck: open the store to check it: %w", err)
	}
	defer st.Close()
	calls := rn.h.Calls()
	res.Report, err = Check(ctx, Input{Calls: calls, Effects: rn.prov.Effects(), Store: st, Runs: rn.runs, Replay: rn.cl.replayMatches})
	if err != nil {
		return nil, err
	}
	res.judgeFaults(calls)
	return res, nil
}
