package toolgate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/reload"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/toolsource"
	"github.com/toolgate/toolgate/types"
)

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

// The Gateway's own names for what its methods take and give, defined by
// the packages that do the work.
type (
	// Clock tells the time and waits: Now is the current time, and
	// Sleep(ctx, d) waits for d or until ctx is done, returning ctx.Err()
	// in the second case. Options.Clock takes one, so that a test can run
	// the gateway (timeouts, back-off, leases, approval expiry) on a clock
	// it moves itself; any type with these two methods will do.
	Clock = clock.Clock
	// Rand is a source of uniform numbers in [0, 1), safe for concurrent
	// use: the retry back-off's jitter (Options.Rand).
	Rand = clock.Rand
	// Sink sees every committed execution row (Options.Sinks).
	Sink = monitor.Sink
	// RunOptions start a run (StartRun).
	RunOptions = pipeline.RunOptions
	// Replayed is the outcome of rebuilding a run's state from its log
	// (Replay).
	Replayed = pipeline.Replayed
	// BreakerSnapshot is the state of one circuit breaker (Breakers).
	BreakerSnapshot = breaker.Snapshot
	// Settled is what Reconcile did with one operation whose outcome was
	// unknown: its key, tool and run, and the code and observation of its
	// repeat.
	Settled = pipeline.Settled
	// QuotaUse is one quota key's use inside its window, as GET /v1/quotas
	// shows it (QuotaUsage).
	QuotaUse = pipeline.QuotaUse
	// UpstreamRead is a read of an imported MCP server that is not a tool
	// call (resources/read, prompts/get, completion/complete): see
	// ReadUpstream.
	UpstreamRead = pipeline.Read
	// MCPEvents are told what the imported MCP servers say about their
	// catalogues (OnMCPEvents).
	MCPEvents = toolsource.MCPEvents
	// ConfigInfo says which configuration a Gateway runs (ConfigInfo).
	ConfigInfo = reload.ConfigInfo
	// ReloadOutcome is what one reload did (Reload).
	ReloadOutcome = reload.ReloadOutcome
	// Imports is what Import found.
	Imports = toolsource.Imports
)

// ErrUnknownRun is returned for a run id the store does not hold.
var ErrUnknownRun = pipeline.ErrUnknownRun

// RestartOnlyKeys are the top-level config keys a reload does not apply
// (see reload.RestartOnlyKeys).
var RestartOnlyKeys = reload.RestartOnlyKeys

// DefaultImportTimeout bounds reading the OpenAPI documents, connecting
// to the MCP servers and listing their tools when a gateway opens.
const DefaultImportTimeout = toolsource.DefaultImportTimeout

// Import reads the OpenAPI documents and lists the MCP servers' tools of
// a loaded config, and merges them in, as a gateway opened on cfg would
// (see toolsource.Import).
func Import(ctx context.Context, cfg *config.Config, timeout time.Duration) (*Imports, error) {
	return toolsource.Import(ctx, cfg, timeout)
}

// NewRunID makes a fresh run id ("run_" and 16 hex digits), the one StartRun
// gives a run created without an id.
func NewRunID() string { return pipeline.NewRunID() }

// DefaultOwner is a fresh owner name for a process (host, pid and a random
// suffix), the one Open uses when Options.Owner is empty; a caller that
// needs to know it before Open (to open a store with the same owner) makes
// it here and passes it as Options.Owner.
func DefaultOwner() string { return pipeline.DefaultOwner() }

// ParsePrincipal reads a principal document strictly: a JSON object with id
// (required), permissions, limits (numbers, kept exact) and attrs; any other
// field, or one of the wrong JSON kind, is an error naming it.
func ParsePrincipal(raw []byte) (Principal, error) { return types.ParsePrincipal(raw) }

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
