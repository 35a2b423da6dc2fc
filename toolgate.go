// Package toolgate is the safe path between "the model asked for a tool" and
// "the observation goes back into the trace", as a Go library.
//
// A Gateway validates each call, executes it with per-phase timeouts, an
// operation key, a circuit breaker and safe retries, normalises the result
// into one envelope, writes an observation the model can act on, records one
// execution row, and updates the run's state atomically. The same pipeline
// backs the toolgate server, its MCP endpoint and its command line.
//
// Tools are declared in a toolgate.yaml (HTTP tools) or in Go (Func tools),
// or both:
//
//	cfg, _ := config.Load("toolgate.yaml")
//	cfg.Tools["lookup_weather"] = &config.Tool{Description: "...", Effect: "read", Func: weather}
//	gw, _ := toolgate.Open(ctx, toolgate.Options{Config: cfg})
//	run, _ := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
//	res, _ := gw.Call(ctx, run.ID, "lookup_weather", map[string]any{"city": "Pune"})
package toolgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

// The plain types of a call, re-exported for users of the library.
type (
	// Result is the envelope every call returns.
	Result = types.Result
	// Principal is who a run acts for.
	Principal = types.Principal
	// Run is one agent conversation or task.
	Run = types.Run
	// Execution is the monitoring row of one call.
	Execution = types.Execution
	// Call is one request by the model to run one tool.
	Call = types.Call
	// Tool declares one tool.
	Tool = config.Tool
	// Func is a Go-function tool.
	Func = config.Func
	// FuncError lets a Go tool classify its failure.
	FuncError = config.FuncError
)

// ErrUnknownRun is returned for a run id the store does not hold.
var ErrUnknownRun = pipeline.ErrUnknownRun

// Options configure a Gateway. Zero values are the documented defaults.
type Options struct {
	// Config is the tools configuration. Either Config or ConfigPath.
	Config *config.Config
	// ConfigPath is a toolgate.yaml to load when Config is nil.
	ConfigPath string
	// Store keeps runs, executions and the ledger. Default: the config's
	// store when StoreFromConfig is set, else an in-memory store.
	Store store.Store
	// StoreFromConfig opens the store named by the config's `store:` key
	// (the server's behaviour) instead of the in-memory default.
	StoreFromConfig bool
	// Executor replaces how attempts are made (tests, custom transports).
	Executor execute.Executor
	// Clock and Rand replace time and jitter (tests). Default: the wall
	// clock and a runtime-seeded source.
	Clock Clock
	Rand  Rand
	// Logger gets one line per call (message "call"): at debug for an
	// ordinary outcome, at warn for an unknown side effect, at error for
	// internal_error. Default slog.Default().
	Logger *slog.Logger
	// Sinks see every committed execution row.
	Sinks []Sink
	// Owner names this process in the ledger's leases.
	Owner string
	// Tracer makes the call and attempt spans. Default: the global
	// OpenTelemetry provider's tracer (a no-op until one is installed).
	Tracer trace.Tracer
	// LeaseMargin is added to a write's deadline to make its lease in the
	// ledger: once the lease ends, another replica takes the operation's
	// owner for dead and its outcome for unknown. It must exceed the clock
	// skew between replicas. Default 30s.
	LeaseMargin time.Duration
	// ToolsRefreshed, when set, is called after an MCP server's refreshed
	// tool list (notifications/tools/list_changed, a stdio restart) has been
	// merged and the calls that start from then on see it; err says why a
	// list was not merged (the previous tools stay).
	ToolsRefreshed func(dependency string, err error)
	// Offline opens without connecting to the MCP servers that the config
	// imports tools from: their tools are then absent (read-only commands
	// that only read the store). Default false.
	Offline bool
	// MCPStderr receives the stdio MCP servers' stderr, at most 1 MiB each
	// time one starts (the rest is dropped, with one warning in Logger).
	// Default os.Stderr.
	MCPStderr io.Writer
	// ImportTimeout bounds connecting to the MCP servers of the config and
	// listing their tools at Open. Default 30s.
	ImportTimeout time.Duration
}

// Gateway is an embedded toolgate.
type Gateway struct {
	pipeline  *pipeline.Pipeline
	store     store.Store
	ownsStore bool
	upstreams *upstreams // nil without MCP servers

	reloadMu        sync.Mutex // one reload at a time; guards the fields below
	loadedAt        time.Time
	restartRequired []string
	lastReload      *ReloadOutcome
}

// Open loads the configuration, opens the store and compiles the pipeline.
func Open(ctx context.Context, opts Options) (*Gateway, error) {
	cfg := opts.Config
	if cfg == nil {
		if opts.ConfigPath == "" {
			return nil, errors.New("toolgate: Options needs Config or ConfigPath")
		}
		var err error
		if cfg, err = config.Load(opts.ConfigPath); err != nil {
			return nil, err
		}
	} else if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	g := &Gateway{store: opts.Store}
	owner := opts.Owner
	if g.store == nil {
		url := "memory"
		if opts.StoreFromConfig {
			url = cfg.Store
		}
		var st store.Store
		if url == "memory" && opts.Clock != nil {
			// The store's own timestamps follow the gateway's clock.
			st = memory.NewWithClock(opts.Clock.Now)
		} else {
			var err error
			if st, err = storeurl.Open(ctx, url, storeurl.Options{Owner: owner, Recover: true}); err != nil {
				return nil, err
			}
		}
		g.store, g.ownsStore = st, true
	}
	cfg, exec, err := g.openUpstreams(ctx, cfg, opts, opts.Executor)
	if err != nil {
		if g.ownsStore {
			g.store.Close()
		}
		return nil, err
	}
	p, err := pipeline.New(&pipeline.Config{
		Tools: cfg, Store: g.store, Executor: exec, Clock: opts.Clock,
		Rand: opts.Rand, Logger: opts.Logger, Sinks: opts.Sinks, Owner: owner, Tracer: opts.Tracer,
		LeaseMargin: opts.LeaseMargin,
	})
	if err != nil {
		if g.upstreams != nil {
			g.upstreams.close()
		}
		if g.ownsStore {
			g.store.Close()
		}
		return nil, err
	}
	g.pipeline = p
	if g.upstreams != nil {
		log := opts.Logger
		if log == nil {
			log = slog.Default()
		}
		g.upstreams.bind(p.SetTools, log.Info)
	}
	g.loadedAt = p.Now()
	return g, nil
}

// Close releases connections, and the store if the gateway opened it.
func (g *Gateway) Close() error {
	if g.upstreams != nil {
		g.upstreams.close()
	}
	g.pipeline.Close()
	if g.ownsStore {
		return g.store.Close()
	}
	return nil
}

// Store is the gateway's store.
func (g *Gateway) Store() store.Store { return g.store }

// Config is the configuration the gateway runs: the one new calls are
// admitted under (see Reload).
func (g *Gateway) Config() *config.Config { return g.pipeline.Tools() }

// RunOptions start a run.
type RunOptions struct {
	// ID of the run; a random one when empty.
	ID string
	// Principal the run acts for.
	Principal Principal
	// State is the initial state document (a JSON object); empty means {}.
	State json.RawMessage
	// MaxSteps bounds the calls of the run; 0 means no bound.
	MaxSteps int64
	// Owner is the API key name that owns the run ("" for the library).
	Owner string
}

// StartRun creates a run.
func (g *Gateway) StartRun(ctx context.Context, o RunOptions) (*Run, error) {
	id := o.ID
	if id == "" {
		id = pipeline.NewRunID()
	}
	st, err := state.Canonicalize(o.State)
	if err != nil {
		return nil, fmt.Errorf("toolgate: initial %w", err)
	}
	if o.MaxSteps < 0 {
		return nil, errors.New("toolgate: max_steps must not be negative")
	}
	now := g.pipeline.Now()
	run := &Run{ID: id, Principal: o.Principal, State: st, InitialState: st, MaxSteps: o.MaxSteps,
		Owner: o.Owner, CreatedAt: now, UpdatedAt: now}
	if err := g.store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	return run, nil
}

// Call runs one tool call. args is a JSON object: a json.RawMessage or
// []byte is used as is, anything else is encoded with encoding/json.
func (g *Gateway) Call(ctx context.Context, runID, tool string, args any) (*Result, error) {
	raw, err := Args(args)
	if err != nil {
		return nil, err
	}
	return g.pipeline.Call(ctx, &Call{RunID: runID, Tool: tool, Args: raw})
}

// Do runs a fully described call (call id, usage).
func (g *Gateway) Do(ctx context.Context, c *Call) (*Result, error) {
	return g.pipeline.Call(ctx, c)
}

// Args encodes tool arguments as JSON.
func Args(v any) (json.RawMessage, error) {
	switch a := v.(type) {
	case json.RawMessage:
		return a, nil
	case []byte:
		return a, nil
	case nil:
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("toolgate: args: %w", err)
	}
	return b, nil
}

// GetRun returns a run.
func (g *Gateway) GetRun(ctx context.Context, id string) (*Run, error) {
	r, err := g.store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRun, id)
	}
	return r, err
}

// History returns all of a run's execution rows in commit order.
func (g *Gateway) History(ctx context.Context, runID string) ([]Execution, error) {
	// A limit of 0 or less means the store's default page (100), not all.
	return g.store.ListExecutions(ctx, types.ExecutionFilter{RunID: runID, Ascending: true, Limit: math.MaxInt})
}

// Replayed is the outcome of rebuilding a run's state from its log.
type Replayed struct {
	// State is the state rebuilt from the execution log alone.
	State json.RawMessage `json:"state"`
	// Matches says whether it equals the stored state.
	Matches bool `json:"matches"`
	// Steps is how many execution rows were folded.
	Steps int `json:"steps"`
}

// Replay rebuilds a run's state from its initial state and the state
// patches recorded in its execution rows, and compares it with the stored
// state.
func (g *Gateway) Replay(ctx context.Context, runID string) (*Replayed, error) {
	run, err := g.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	rows, err := g.History(ctx, runID)
	if err != nil {
		return nil, err
	}
	st, err := state.Replay(run.InitialState, rows)
	if err != nil {
		return nil, err
	}
	return &Replayed{State: st, Matches: state.Equal(st, run.State), Steps: len(rows)}, nil
}

// ErrNoApprovals is returned when the store cannot hold approvals.
var ErrNoApprovals = errors.New("toolgate: this store does not keep approvals")

// Approvals lists approval requests in a status ("" for all), newest first.
func (g *Gateway) Approvals(ctx context.Context, status store.ApprovalStatus, limit int) ([]store.Approval, error) {
	as, ok := g.store.(store.ApprovalStore)
	if !ok {
		return nil, ErrNoApprovals
	}
	return as.ListApprovals(ctx, status, limit)
}

// Approval returns one approval request.
func (g *Gateway) Approval(ctx context.Context, id string) (*store.Approval, error) {
	as, ok := g.store.(store.ApprovalStore)
	if !ok {
		return nil, ErrNoApprovals
	}
	return as.GetApproval(ctx, id)
}

// Decide approves or denies a pending approval. The decision binds to the
// exact action the request names; the model's repeat of that call then runs
// (once) or is told it was denied.
func (g *Gateway) Decide(ctx context.Context, id string, approve bool, by, comment string) (*store.Approval, error) {
	return g.DecideAs(ctx, id, approve, by, "", comment)
}

// DecideAs is Decide recording, beside the free-text by, the name of the
// API key that made the decision (the server passes the caller's).
func (g *Gateway) DecideAs(ctx context.Context, id string, approve bool, by, byKey, comment string) (*store.Approval, error) {
	as, ok := g.store.(store.ApprovalStore)
	if !ok {
		return nil, ErrNoApprovals
	}
	status := store.ApprovalDenied
	if approve {
		status = store.ApprovalApproved
	}
	return as.DecideApproval(ctx, id, status, store.Decider(by, byKey), comment, g.pipeline.Now())
}
