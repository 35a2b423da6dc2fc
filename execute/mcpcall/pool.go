package mcpcall

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/clock"
)

// OperationKeyMeta is the _meta key of tools/call that carries a write's
// operation key, for servers that dedupe: the same on every attempt and on
// every repeat of the operation.
const OperationKeyMeta = "toolgate/operation_key"

// Options configure a Pool. Every zero value is a documented default.
type Options struct {
	// Clock paces the restarts of stdio servers. Default clock.Real{}.
	// Timeouts use real timers: they bound real I/O.
	Clock clock.Clock
	// Logger gets a line when a server ends or a refresh fails. Default
	// slog.Default().
	Logger *slog.Logger
	// Stderr receives the stdio servers' stderr, at most 1 MiB each time
	// one starts (the rest is dropped, with one warning). Default
	// os.Stderr.
	Stderr io.Writer
	// TerminateDuration is how long Close waits for a stdio server to exit
	// after its stdin is closed before it is signalled. Default 5s.
	TerminateDuration time.Duration
	// Version is toolgate's version in the initialize request. Default
	// "dev".
	Version string
	// OnToolsChanged is called with a server's whole new tool list after
	// notifications/tools/list_changed and after a stdio server restarted.
	// It runs on a goroutine of the pool; Close waits for it.
	OnToolsChanged func(dependency string, tools []config.ImportedTool)
	// OnResourceUpdated is called with a server's
	// notifications/resources/updated (on the SDK's reading goroutine: it
	// must not block). See Subscribe.
	OnResourceUpdated func(dependency, uri string)
	// OnCatalogueChanged is called after a server's
	// notifications/resources/list_changed or prompts/list_changed, and
	// after a new session replaced one that ended. It runs on a goroutine
	// of the pool; Close waits for it.
	OnCatalogueChanged func(dependency string)
}

// Pool is the executor of MCP tools: one session manager per MCP
// dependency. It is safe for concurrent use.
type Pool struct {
	opts    Options
	servers map[string]*server
}

var _ execute.Executor = (*Pool)(nil)

// New returns a pool for the MCP dependencies of cfg. It connects to none
// of them: Import does, and so does the first call of each.
func New(cfg *config.Config, opts Options) *Pool {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	p := &Pool{opts: opts, servers: map[string]*server{}}
	for name, d := range cfg.Dependencies {
		if d != nil && d.MCP != nil {
			p.servers[name] = newServer(name, *d.MCP, &p.opts)
		}
	}
	return p
}

// HasMCP reports whether cfg has an MCP dependency.
func HasMCP(cfg *config.Config) bool {
	for _, d := range cfg.Dependencies {
		if d != nil && d.MCP != nil {
			return true
		}
	}
	return false
}

// Import connects to every dependency of cfg that imports tools and lists
// them, all servers at once. ctx bounds the whole import. The error joins
// every server's failure.
func (p *Pool) Import(ctx context.Context, cfg *config.Config) (map[string][]config.ImportedTool, error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	lists := map[string][]config.ImportedTool{}
	var errs []error
	for _, name := range cfg.ImportingDependencies() {
		s := p.servers[name]
		if s == nil {
			continue // an OpenAPI source: not ours
		}
		wg.Go(func() {
			tools, err := s.list(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lists[name] = tools
		})
	}
	wg.Wait()
	return lists, errors.Join(errs...)
}

// Close ends every session, stops every stdio server and waits for the
// pool's goroutines.
func (p *Pool) Close() {
	var wg sync.WaitGroup
	for _, s := range p.servers {
		wg.Go(s.close)
	}
	wg.Wait()
}
