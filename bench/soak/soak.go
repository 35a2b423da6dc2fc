// Package soak is toolgate's fault-injection soak: many write calls from
// concurrent callers, many repeating the same operation, through the real
// `toolgate serve` binary on a SQLite file, against a payment provider that
// is slow past the tools' read timeout (and still makes the refund), answers
// 503, and resets connections after reading the request. It counts the
// effects of every operation at the provider and checks, after the server
// has exited, against the ledger and the execution rows in the SQLite file:
//
//   - duplicates: no operation has more than one effect at the provider;
//   - rows: every call answered (an HTTP 200 envelope) has its execution
//     row, with the same code, and there is no other row;
//   - settlement: after a final pass that repeats every operation no call
//     has confirmed (the ledger verifies first, or re-sends under the key
//     the provider honours), every operation whose effect happened is
//     completed, every completed operation has exactly one effect, none is
//     left started, and an operation may stay unknown only when the
//     provider's own log shows it never made the refund (every request of
//     that operation that reached it was declined or reset before
//     processing, or none reached it);
//   - state: each run's state sums exactly the refunds of its operations,
//     and replaying its log rebuilds it.
//
// The same calls through a textbook retry loop (no key, retry on timeout)
// are run against a fresh provider for contrast.
package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
	"github.com/toolgate/toolgate/types"
)

// Options shape one soak. Zero values are the documented defaults.
type Options struct {
	// Binary is the toolgate binary to serve with (serveproc.Build).
	// Required.
	Binary string
	// Dir holds the config and the SQLite file. Required; it should be
	// empty.
	Dir string
	// Calls is the number of calls in the load phase. Default 10,000.
	Calls int
	// Operations is the number of distinct operations the calls repeat.
	// Default Calls/4 (each operation about four times).
	Operations int
	// Callers is the number of concurrent callers. Default 32.
	Callers int
	// Runs is the number of runs the operations are spread over. Default
	// Callers.
	Runs int
	// ReadTimeout is the write tools' read timeout. Default 200ms.
	ReadTimeout time.Duration
	// Faults are the provider's failure rates. Default: Slow 0.30 with
	// SlowDelay 2×ReadTimeout, Unavailable 0.05, Reset 0.02. Set
	// NoDefaultFaults to use Faults as given (zeros included).
	Faults          Faults
	NoDefaultFaults bool
	// Seed makes the calls' order and the provider's fault draws
	// repeatable (timing still varies). Default 1.
	Seed uint64
	// Textbook also runs the calls through a textbook retry loop.
	Textbook bool
	// ServeArgs are extra flags for `toolgate serve`. Default
	// "--log-level warn".
	ServeArgs []string
	// Progress, when set, is told of each phase and each call answered.
	Progress Progress
}

// Progress follows a soak.
type Progress interface {
	// Phase starts a phase of total steps.
	Phase(name string, total int)
	// Add counts n steps done.
	Add(n int)
}

func (o *Options) defaults() error {
	if o.Binary == "" || o.Dir == "" {
		return errors.New("soak: Options needs Binary and Dir")
	}
	if o.Calls <= 0 {
		o.Calls = 10_000
	}
	if o.Operations <= 0 {
		o.Operations = max(1, o.Calls/4)
	}
	if o.Operations > o.Calls {
		return fmt.Errorf("soak: %d operations need at least as many calls (have %d)", o.Operations, o.Calls)
	}
	if o.Callers <= 0 {
		o.Callers = 32
	}
	if o.Runs <= 0 {
		o.Runs = o.Callers
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 200 * time.Millisecond
	}
	if !o.NoDefaultFaults && o.Faults == (Faults{}) {
		o.Faults = Faults{Slow: 0.30, Unavailable: 0.05, Reset: 0.02}
	}
	if o.Faults.SlowDelay <= 0 {
		o.Faults.SlowDelay = 2 * o.ReadTimeout
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ServeArgs == nil {
		o.ServeArgs = []string{"--log-level", "warn"}
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	return nil
}

type noProgress struct{}

func (noProgress) Phase(string, int) {}
func (noProgress) Add(int)           {}

// operation is one refund: its own order at the provider, so the order's
// refunds are the operation's effects.
type operation struct {
	index  int
	tool   string
	run    string
	order  string
	amount int64
	args   string
	// confirmed: some call answered ok for it.
	confirmed atomic.Bool
}

// Run runs one soak and returns its figures. The error is for a soak that
// could not be run (a build, a port, a file); a soak that ran and found a
// violation returns a Report whose Failures say which.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	rep := &Report{Calls: o.Calls, Operations: o.Operations, Callers: o.Callers, Runs: o.Runs,
		ReadTimeoutMS: ms(o.ReadTimeout), Faults: faultsOf(o.Faults), Seed: o.Seed}
	ops := makeOperations(&o)
	calls := makeCalls(&o, ops)

	tg, err := runToolgate(ctx, &o, ops, calls)
	if err != nil {
		return nil, err
	}
	rep.Toolgate = tg
	if o.Textbook {
		tb, err := runTextbook(ctx, &o, ops, calls)
		if err != nil {
			return nil, err
		}
		rep.Textbook = tb
	}
	rep.check()
	return rep, nil
}

// makeOperations spreads the operations over the tools and the runs.
func makeOperations(o *Options) []*operation {
	ops := make([]*operation, o.Operations)
	for i := range ops {
		order := fmt.Sprintf("ORD-%d", 100000+i)
		amount := int64(1000 + i)
		ops[i] = &operation{index: i, tool: Tools[i%len(Tools)], run: runID(i % o.Runs), order: order, amount: amount,
			args: fmt.Sprintf(`{"order_id":%q,"amount_paise":%d}`, order, amount)}
	}
	return ops
}

func runID(i int) string { return fmt.Sprintf("soak-%03d", i) }

// makeCalls lists the load phase's calls: every operation once, the rest
// repeats of random operations, shuffled.
func makeCalls(o *Options, ops []*operation) []*operation {
	rng := rand.New(rand.NewPCG(o.Seed, 0xca11))
	calls := make([]*operation, 0, o.Calls)
	calls = append(calls, ops...)
	for len(calls) < o.Calls {
		calls = append(calls, ops[rng.IntN(len(ops))])
	}
	rng.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
	return calls
}

// runToolgate is the soak through toolgate: the load phase, the final
// pass, the checks against the provider, the server's answers and, once
// the server has exited, its SQLite file.
func runToolgate(ctx context.Context, o *Options, ops, calls []*operation) (*ToolgateFigures, error) {
	fig := &ToolgateFigures{Codes: map[string]int{}, FinalCodes: map[string]int{}}
	prov, err := StartProvider(o.Faults, o.Seed)
	if err != nil {
		return nil, err
	}
	provClosed := false
	defer func() {
		if !provClosed {
			_ = prov.Close(context.Background())
		}
	}()
	srv, err := startToolgate(ctx, o, prov.URL)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop(time.Minute)
		}
	}()
	cl := newClient(srv.URL, o.Callers)
	if err := cl.createRuns(ctx, o.Runs); err != nil {
		return nil, err
	}

	// The load phase.
	began := time.Now()
	sent := loadPhase(ctx, o, cl, ops, calls, fig, began)

	// The incident is over: the provider answers at once from now on, and
	// every slow refund still in progress is made before the final pass.
	prov.Calm()
	if err := waitIdle(ctx, prov); err != nil {
		return nil, err
	}
	final := finalPass(ctx, o, cl, ops, fig)
	sent = append(sent, final...)
	fig.Seconds = time.Since(began).Seconds()

	// Runs: state and replay, while the server is up.
	runs, err := cl.runs(ctx, o.Runs)
	if err != nil {
		return nil, err
	}

	stopped = true
	fig.stopServer(srv)
	provClosed = true
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := prov.Close(closeCtx); err != nil {
		return nil, err
	}
	fig.Provider = prov.Totals()

	db, err := readDatabase(ctx, filepath.Join(o.Dir, "toolgate.db"))
	if err != nil {
		return nil, err
	}
	fig.settle(ops, prov.Orders(), db, sent, runs)
	return fig, nil
}

// startToolgate writes the soak's config, in front of the provider at
// providerURL, into o.Dir and starts the server on it.
func startToolgate(ctx context.Context, o *Options, providerURL string) (*serveproc.Process, error) {
	cfgPath := filepath.Join(o.Dir, "toolgate.yaml")
	if err := os.WriteFile(cfgPath, []byte(Config(providerURL, o.ReadTimeout)), 0o600); err != nil {
		return nil, err
	}
	return serveproc.Start(ctx, serveproc.Options{Binary: o.Binary, Config: cfgPath, Args: o.ServeArgs})
}

// loadPhase sends calls, o.Callers at a time, counting their codes and the
// operations left unconfirmed in fig, and returns the answers.
func loadPhase(ctx context.Context, o *Options, cl *client, ops, calls []*operation, fig *ToolgateFigures, began time.Time) []answer {
	o.Progress.Phase("soak: toolgate", len(calls))
	answers := make([]answer, len(calls))
	parallel(o.Callers, len(calls), func(i int) {
		op := calls[i]
		answers[i] = cl.call(ctx, op, fmt.Sprintf("L%d", i))
		if answers[i].env.OK {
			op.confirmed.Store(true)
		}
		o.Progress.Add(1)
	})
	fig.LoadSeconds = time.Since(began).Seconds()
	fig.CallsSent = len(calls)
	sent := append([]answer(nil), answers...)
	for _, a := range answers {
		fig.count(a, fig.Codes)
	}
	for _, op := range ops {
		if !op.confirmed.Load() {
			fig.UnconfirmedAfterLoad++
		}
	}
	return sent
}

// stopServer stops srv and records how it ended: its exit, its error
// lines, races and panics, and its standard error when any went wrong.
func (f *ToolgateFigures) stopServer(srv *serveproc.Process) {
	if err := srv.Stop(time.Minute); err != nil {
		f.ServerExit = err.Error()
	} else {
		f.ServerExit = "ok"
	}
	f.ServerErrorLines, f.Races, f.Panics = srv.ErrorLines(), srv.Races(), srv.Panics()
	if f.ServerErrorLines+f.Races+f.Panics > 0 || f.ServerExit != "ok" {
		f.ServerStderr = srv.Stderr()
	}
}

// finalPass repeats every operation no call has confirmed, as an agent
// would once the provider recovered: the ledger verifies first (or re-sends
// under the honoured key). Rounds go on while they change something: an
// operation confirmed, or an answer other than unknown_outcome (the answer
// of a verify read that found nothing, which a quiet provider will not
// change). An answer that says when to come back is honoured.
func finalPass(ctx context.Context, o *Options, cl *client, ops []*operation, fig *ToolgateFigures) []answer {
	var sent []answer
	for round := 1; round <= maxFinalRounds; round++ {
		var pending []*operation
		for _, op := range ops {
			if !op.confirmed.Load() {
				pending = append(pending, op)
			}
		}
		if len(pending) == 0 {
			break
		}
		fig.FinalRounds = round
		o.Progress.Phase(fmt.Sprintf("soak: final pass %d", round), len(pending))
		answers := make([]answer, len(pending))
		parallel(o.Callers, len(pending), func(i int) {
			answers[i] = cl.call(ctx, pending[i], fmt.Sprintf("F%d-%d", round, i))
			if answers[i].env.OK {
				pending[i].confirmed.Store(true)
			}
			o.Progress.Add(1)
		})
		changed, wait := false, time.Duration(0)
		for _, a := range answers {
			fig.count(a, fig.FinalCodes)
			fig.FinalPassCalls++
			if !a.answered() || a.env.Code() != types.CodeUnknownOutcome {
				changed = true
			}
			wait = max(wait, time.Duration(a.env.Meta.RetryAfterMS)*time.Millisecond)
		}
		sent = append(sent, answers...)
		if !changed {
			break
		}
		if wait > 0 {
			// The agent honours meta.retry_after_ms, as the observation asks.
			t := time.NewTimer(min(wait, 2*time.Second))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return sent
			}
		}
	}
	return sent
}

// maxFinalRounds bounds the final pass.
const maxFinalRounds = 8

// waitIdle waits, at most a minute, for the provider to finish every
// request in progress.
func waitIdle(ctx context.Context, p *Provider) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitIdle(ctx)
}

// parallel runs fn(0..n-1) on workers goroutines.
func parallel(workers, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				fn(int(i))
			}
		})
	}
	wg.Wait()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// newTransport is the soak clients' transport: enough idle connections
// for every caller.
func newTransport(callers int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * callers
	t.MaxIdleConnsPerHost = 2 * callers
	return t
}
