package pipeline

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/retry"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/validate"
)

// ErrUnknownRun is returned by Call for a run id the store does not hold.
var ErrUnknownRun = errors.New("unknown run")

// Config assembles a pipeline. Zero values are the documented defaults.
type Config struct {
	// Tools is the loaded, normalized configuration. Required.
	Tools *config.Config
	// Store keeps runs, executions and the operation ledger. Required.
	Store store.Store
	// Executor runs one attempt. Default: HTTP tools over an execute.HTTP,
	// Go-function tools in process.
	Executor execute.Executor
	// Clock is the time source of the policies. Default: the wall clock.
	Clock clock.Clock
	// Rand is the jitter source. Default: a shared random source.
	Rand clock.Rand
	// Owner names this process in the ledger's leases. Default:
	// hostname-pid-random. With a store that is a store.Fencer
	// (PostgreSQL), a write's operation is owned by the owner id of the
	// store's liveness fence instead, which changes when the liveness is
	// lost and regained.
	Owner string
	// Logger gets one line per call (message "call"): debug for an ordinary
	// outcome, warn for an unknown side effect, error for internal_error.
	// Default: slog.Default().
	Logger *slog.Logger
	// Sinks see every execution row after it is committed (metrics, stats).
	Sinks []Sink
	// Tracer makes the call and attempt spans. Default: the global
	// OpenTelemetry provider's tracer (a no-op until one is installed).
	Tracer trace.Tracer
	// LeaseMargin is added to a call's deadline to make its ledger lease.
	// Default 30s.
	LeaseMargin time.Duration
}

// Sink is told about every committed execution row: monitor.Sink, kept
// under this name for the library's users.
type Sink = monitor.Sink

// Pipeline runs calls. It is safe for concurrent use.
type Pipeline struct {
	cur      atomic.Pointer[live] // the configuration new calls are admitted under
	env      *expr.Env
	store    store.Store
	exec     execute.Executor
	httpExec *execute.HTTP
	clock    clock.Clock
	rand     clock.Rand
	owner    string
	log      *slog.Logger
	sinks    []Sink
	margin   time.Duration
	tracer   trace.Tracer // nil: follow the global provider
	noTrace  bool         // tracer is a no-op: make no spans
	breakers *breaker.Set
	budgets  *retry.Budgets
	waiters  waiters
	// fencer is the store's liveness (nil for a store of one process):
	// writes are begun under its fence and sent only while it holds.
	fencer store.Fencer
	// outbox keeps the records of calls answered while the store did not
	// take them, and writes them once it does (outbox.go).
	outbox outbox
}

// New checks cfg, compiles every schema and expression once, and returns a
// pipeline ready for calls.
func New(cfg *Config) (*Pipeline, error) {
	if cfg.Tools == nil || cfg.Store == nil {
		return nil, errors.New("pipeline: Tools and Store are required")
	}
	env, err := expr.NewEnv()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	p := &Pipeline{
		env:    env,
		store:  cfg.Store,
		exec:   cfg.Executor,
		clock:  cfg.Clock,
		rand:   cfg.Rand,
		owner:  cfg.Owner,
		log:    cfg.Logger,
		sinks:  cfg.Sinks,
		margin: cfg.LeaseMargin,
		tracer: cfg.Tracer,
	}
	// The store's liveness, found through wrappers (store.As): a wrapper
	// must never silently drop the fence.
	p.fencer, _ = store.As[store.Fencer](cfg.Store)
	if _, err := p.swap(cfg.Tools); err != nil {
		return nil, err
	}
	if p.clock == nil {
		p.clock = clock.Real{}
	}
	if p.rand == nil {
		p.rand = clock.NewRand()
	}
	if p.owner == "" {
		p.owner = defaultOwner()
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if _, ok := p.tracer.(noop.Tracer); ok {
		p.noTrace = true
	}
	if p.margin == 0 {
		p.margin = 30 * time.Second
	}
	if p.exec == nil {
		p.httpExec = execute.NewHTTP(execute.HTTPOptions{Clock: p.clock})
		p.exec = &execute.Router{HTTP: p.httpExec}
	}
	p.breakers = breaker.NewSet(p.clock)
	p.budgets = retry.NewBudgets()
	return p, nil
}

// Close writes the records the store could not take when their calls
// ended, if it takes them now (trying for a few seconds), and releases the
// pipeline's idle connections. It does not close the store, which the
// caller owns.
func (p *Pipeline) Close() {
	p.closeOutbox()
	if p.httpExec != nil {
		p.httpExec.Close()
	}
}

// Owner is this pipeline's name in the ledger's leases (with a
// store.Fencer, the prefix of its fences' owner ids when the store was
// opened under it).
func (p *Pipeline) Owner() string { return p.owner }

// Validator gives access to the compiled tools of the current
// configuration (for exports and what-if).
func (p *Pipeline) Validator() *validate.Validator { return p.cur.Load().validator }

// Breakers returns the state of every circuit breaker this process holds.
func (p *Pipeline) Breakers() []breaker.Snapshot { return p.breakers.Snapshots() }

// Tools is the configuration new calls are admitted under (see Reload).
func (p *Pipeline) Tools() *config.Config { return p.cur.Load().tools }

// DefaultOwner is a fresh owner name for a process: host, pid and a random
// suffix, so that two processes never share one.
func DefaultOwner() string { return defaultOwner() }

func defaultOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomID(4))
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewCallID makes a call id for calls that come without one.
func NewCallID() string { return "call_" + randomID(8) }

// NewRunID makes a run id for runs created without one.
func NewRunID() string { return "run_" + randomID(8) }

// Now is the pipeline's clock.
func (p *Pipeline) Now() time.Time { return p.clock.Now() }
