package toolgate

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/reload"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/toolsource"
)

// Gateway is an embedded toolgate.
type Gateway struct {
	pipeline  *pipeline.Pipeline
	store     store.Store
	ownsStore bool
	sources   *toolsource.Sources // the MCP servers and OpenAPI documents
	reload    *reload.Controller
}

// Open loads the configuration, opens the store, imports the tools of the
// MCP servers and OpenAPI documents the configuration names, and compiles
// the pipeline.
func Open(ctx context.Context, opts Options) (*Gateway, error) {
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	g := &Gateway{store: opts.Store}
	if g.store == nil {
		if g.store, err = openStore(ctx, cfg, opts); err != nil {
			return nil, err
		}
		g.ownsStore = true
	}
	if err := g.compose(ctx, cfg, opts); err != nil {
		if g.ownsStore {
			g.store.Close()
		}
		return nil, err
	}
	return g, nil
}

// loadConfig is the configuration Options name, normalized.
func loadConfig(opts Options) (*config.Config, error) {
	if opts.Config == nil {
		if opts.ConfigPath == "" {
			return nil, errors.New("toolgate: Options needs Config or ConfigPath")
		}
		return config.Load(opts.ConfigPath)
	}
	if err := opts.Config.Normalize(); err != nil {
		return nil, err
	}
	return opts.Config, nil
}

// openStore opens the store of a gateway given none: in memory (on the
// gateway's clock when it has one), or the config's with StoreFromConfig.
func openStore(ctx context.Context, cfg *config.Config, opts Options) (store.Store, error) {
	url := "memory"
	if opts.StoreFromConfig {
		url = cfg.Store
	}
	if url == "memory" && opts.Clock != nil {
		// The store's own timestamps follow the gateway's clock.
		return memory.NewWithClock(opts.Clock.Now), nil
	}
	return storeurl.Open(ctx, url, storeurl.Options{Owner: opts.Owner, Recover: true})
}

// compose starts the tool sources, compiles the pipeline on the merged
// config and wires the reload controller.
func (g *Gateway) compose(ctx context.Context, cfg *config.Config, opts Options) error {
	sources, cfg, exec, err := toolsource.Open(ctx, cfg, toolsource.Options{Executor: opts.Executor, Clock: opts.Clock,
		Logger: opts.Logger, Stderr: opts.MCPStderr, Offline: opts.Offline, ImportTimeout: opts.ImportTimeout,
		Refreshed: opts.ToolsRefreshed})
	if err != nil {
		return err
	}
	p, err := pipeline.New(&pipeline.Config{
		Tools: cfg, Store: g.store, Executor: exec, Clock: opts.Clock,
		Rand: opts.Rand, Logger: opts.Logger, Sinks: opts.Sinks, Owner: opts.Owner, Tracer: opts.Tracer,
		LeaseMargin: opts.LeaseMargin,
	})
	if err != nil {
		sources.Close()
		return err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	sources.Bind(p.SetTools, log.Info)
	g.pipeline, g.sources = p, sources
	g.reload = reload.New(reload.Config{Live: p.Tools, Now: p.Now,
		Apply: func(cfg *config.Config) error { return sources.Reload(cfg, p.Reload) }})
	return nil
}

// Close releases connections, and the store if the gateway opened it.
func (g *Gateway) Close() error {
	g.sources.Close()
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

// Now is the gateway's clock (Options.Clock, else the wall clock): the time
// its runs, executions and approvals are stamped with.
func (g *Gateway) Now() time.Time { return g.pipeline.Now() }

// StartRun creates a run.
func (g *Gateway) StartRun(ctx context.Context, o RunOptions) (*Run, error) {
	return g.pipeline.StartRun(ctx, o)
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

// DoRun is Do for a caller that has just read the call's run (the server,
// which checks the run's owner first): it saves reading it again. run must
// be the store's current copy of c.RunID; a stale one costs a retry of the
// state commit, never a wrong update. A nil run, or one of another id, is
// read from the store as Do does.
func (g *Gateway) DoRun(ctx context.Context, c *Call, run *Run) (*Result, error) {
	return g.pipeline.CallRun(ctx, c, run)
}

// GetRun returns a run; an unknown id is an error wrapping ErrUnknownRun.
func (g *Gateway) GetRun(ctx context.Context, id string) (*Run, error) {
	return g.pipeline.GetRun(ctx, id)
}

// History returns all of a run's execution rows in commit order.
func (g *Gateway) History(ctx context.Context, runID string) ([]Execution, error) {
	return g.pipeline.History(ctx, runID)
}

// Replay rebuilds a run's state from its initial state and the state
// patches recorded in its execution rows, and compares it with the stored
// state.
func (g *Gateway) Replay(ctx context.Context, runID string) (*Replayed, error) {
	return g.pipeline.Replay(ctx, runID)
}

// Approvals lists approval requests in a status ("" for all), newest first.
func (g *Gateway) Approvals(ctx context.Context, status store.ApprovalStatus, limit int) ([]store.Approval, error) {
	return g.store.ListApprovals(ctx, status, limit)
}

// Approval returns one approval request.
func (g *Gateway) Approval(ctx context.Context, id string) (*store.Approval, error) {
	return g.store.GetApproval(ctx, id)
}

// Decide approves or denies a pending approval. The decision binds to the
// exact action the request names; the model's repeat of that call then runs
// (once) or is told it was denied.
func (g *Gateway) Decide(ctx context.Context, id string, approve bool, by, comment string) (*store.Approval, error) {
	return g.pipeline.Decide(ctx, id, approve, by, "", comment)
}

// DecideAs is Decide recording, beside the free-text by, the name of the
// API key that made the decision (the server passes the caller's).
func (g *Gateway) DecideAs(ctx context.Context, id string, approve bool, by, byKey, comment string) (*store.Approval, error) {
	return g.pipeline.Decide(ctx, id, approve, by, byKey, comment)
}

// QuotaUsage lists the use of every quota key that has a reservation
// inside its window, for the quotas the config names, by quota then key.
func (g *Gateway) QuotaUsage(ctx context.Context) ([]QuotaUse, error) {
	return g.pipeline.QuotaUsage(ctx)
}

// Breakers returns the state of every circuit breaker this gateway holds.
func (g *Gateway) Breakers() []BreakerSnapshot { return g.pipeline.Breakers() }

// Reconcile settles at most limit operations whose outcome is unknown (left
// started by a crash, or unknown after a timeout): each is repeated as a
// call of its own run with its recorded arguments, so the ledger runs the
// tool's verify read first (or re-sends under the same operation key where
// the dependency honours it). Nothing is executed blindly; each repeat is
// recorded in its run's history like any call.
func (g *Gateway) Reconcile(ctx context.Context, limit int) ([]Settled, error) {
	return g.pipeline.Reconcile(ctx, limit)
}

// Catalogue returns what the API key named key sees and may call under the
// gateway's current configuration: its auth.keys[].tools list resolved
// against every tool, and the tools its lists show (narrowed by the key's
// pinned principal). The empty name (no key) sees every tool. Lists
// (GET /v1/tools, MCP tools/list) show Listed; a call of a tool outside
// Callable is unknown_tool.
func (g *Gateway) Catalogue(key string) *config.Catalogue {
	return g.pipeline.Validator().Catalogue(key)
}

// ConfigInfo returns which configuration is live and how the last reload
// went.
func (g *Gateway) ConfigInfo() ConfigInfo { return g.reload.Info() }

// Reload makes cfg the configuration of every call admitted from now on
// (see reload.Controller.Reload): calls in flight finish under the one
// they were admitted with; the keys of RestartOnlyKeys keep their running
// values; a config that does not compile changes nothing, and the error
// lists every problem.
func (g *Gateway) Reload(cfg *config.Config) (*ReloadOutcome, error) { return g.reload.Reload(cfg) }

// ReloadFile loads path ("" means the file the live config came from) and
// reloads it (Reload).
func (g *Gateway) ReloadFile(path string) (*ReloadOutcome, error) { return g.reload.ReloadFile(path) }

// OnToolsChanged registers f to be called with the new config each time
// the tools change while the gateway runs (an MCP server's refreshed list
// was merged), after calls see them; the MCP endpoint uses it to update
// its own tool list. The returned func unregisters f. Without MCP servers
// the tools never change and f is never called.
func (g *Gateway) OnToolsChanged(f func(*config.Config)) (stop func()) {
	return g.sources.OnToolsChanged(f)
}

// OnMCPEvents registers e; the returned func unregisters it. Without MCP
// servers nothing is ever told.
func (g *Gateway) OnMCPEvents(e MCPEvents) (stop func()) { return g.sources.OnMCPEvents(e) }

// MCPPool is the client of the configuration's MCP servers (their
// catalogues of resources and prompts, their subscriptions); nil when the
// configuration has none.
func (g *Gateway) MCPPool() *mcpcall.Pool { return g.sources.Pool() }

// ReadUpstream runs r under its server's circuit breaker and timeout and
// records it as one execution row of its run, like a read tool call. The
// error is non-nil only for an unknown run or a store failure.
func (g *Gateway) ReadUpstream(ctx context.Context, r *UpstreamRead) (*Result, error) {
	return g.pipeline.Read(ctx, r)
}
