package toolsource

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/toolsource/openapi"
)

// Options configure Open. Zero values are the documented defaults.
type Options struct {
	// Executor, when set, makes the attempts of every call (Open returns
	// it unchanged). Default: one that calls the MCP servers, when the
	// config has any, and HTTP for the rest.
	Executor execute.Executor
	// Clock replaces time for the MCP servers' sessions and the HTTP
	// executor. Default: the wall clock.
	Clock clock.Clock
	// Logger gets the refreshes and the stdio servers' restarts. Default
	// slog.Default().
	Logger *slog.Logger
	// Stderr receives the stdio MCP servers' stderr (see
	// mcpcall.Options.Stderr). Default os.Stderr.
	Stderr io.Writer
	// Offline opens without connecting to the MCP servers or reading the
	// OpenAPI documents: the imported tools are then absent. Default false.
	Offline bool
	// ImportTimeout bounds reading the documents, connecting to the MCP
	// servers and listing their tools. Default DefaultImportTimeout.
	ImportTimeout time.Duration
	// Refreshed, when set, is called after an MCP server's refreshed tool
	// list has been merged and swapped in (see Bind); err says why a list
	// was not merged (the previous tools stay).
	Refreshed func(dependency string, err error)
}

// Sources are a gateway's tool sources: the pool that calls its MCP
// servers (nil without any) and what is needed to merge a refreshed tool
// list (the OpenAPI documents' tools stay as read at Open, until a
// reload reads them again).
type Sources struct {
	imports bool // the config imports from an MCP server or a document
	pool    *mcpcall.Pool
	http    *execute.HTTP

	mu    sync.Mutex
	base  *config.Config // the config as loaded, imports not merged
	lists map[string][]config.ImportedTool
	set   func(*config.Config) error // swaps the pipeline's tools
	log   func(msg string, args ...any)
	hook  func(dependency string, err error)

	toolsChanged subscribers[func(*config.Config)] // OnToolsChanged

	events mcpEvents // resources and prompts (events.go)
}

// Open starts the tool sources of cfg (normalized, imports not merged):
// it connects to its MCP servers and reads its OpenAPI documents, and
// returns cfg with their tools merged in and the executor the calls go
// through (o.Executor when set). Without any source it returns cfg and
// o.Executor unchanged. A document that cannot be read, a server that
// cannot be reached, or a list that does not merge is an error, and
// nothing is left running.
func Open(ctx context.Context, cfg *config.Config, o Options) (*Sources, *config.Config, execute.Executor, error) {
	hasMCP := mcpcall.HasMCP(cfg)
	s := &Sources{imports: hasMCP || openapi.Has(cfg), base: cfg, hook: o.Refreshed}
	if !s.imports {
		return s, cfg, o.Executor, nil
	}
	if hasMCP {
		s.pool = mcpcall.New(cfg, mcpcall.Options{Clock: o.Clock, Logger: o.Logger, Stderr: o.Stderr, OnToolsChanged: s.changed,
			OnResourceUpdated: s.events.resourceUpdated, OnCatalogueChanged: s.events.catalogueChanged})
	}
	if cfg.ImportsPending() && !o.Offline {
		merged, err := s.importAll(ctx, cfg, o.ImportTimeout)
		if err != nil {
			s.Close()
			return nil, nil, nil, err
		}
		cfg = merged
	}
	exec := o.Executor
	if exec == nil && hasMCP {
		s.http = execute.NewHTTP(execute.HTTPOptions{Clock: o.Clock})
		exec = &execute.Router{HTTP: s.http, MCP: s.pool}
	}
	return s, cfg, exec, nil
}

// importAll reads the documents and lists the servers' tools within
// timeout, keeps the lists and returns cfg with them merged in.
func (s *Sources) importAll(ctx context.Context, cfg *config.Config, timeout time.Duration) (*config.Config, error) {
	if timeout <= 0 {
		timeout = DefaultImportTimeout
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lists, err := importOpenAPI(ictx, cfg)
	if err == nil && s.pool != nil {
		var mcpLists map[string][]config.ImportedTool
		if mcpLists, err = s.pool.Import(ictx, cfg); err != nil {
			err = fmt.Errorf("toolgate: importing MCP tools: %w", err)
		}
		maps.Copy(lists, mcpLists)
	}
	if err != nil {
		return nil, err
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.lists = lists
	s.mu.Unlock()
	return merged, nil
}

// Bind lets refreshes reach the pipeline once it exists: set swaps its
// tools, log says what a refresh did.
func (s *Sources) Bind(set func(*config.Config) error, log func(msg string, args ...any)) {
	s.mu.Lock()
	s.set, s.log = set, log
	s.mu.Unlock()
}

// Pool is the client of the config's MCP servers (their catalogues of
// resources and prompts, their subscriptions); nil when it has none.
func (s *Sources) Pool() *mcpcall.Pool { return s.pool }

// changed merges a server's new tool list and swaps the pipeline's tools;
// a tool that disappeared then answers unknown_tool. A list that does not
// merge (an override now names nothing, say) keeps the old tools.
func (s *Sources) changed(dep string, tools []config.ImportedTool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil || !s.base.HasImports() || s.base.Dependencies[dep] == nil || s.base.Dependencies[dep].Import == nil {
		return
	}
	lists := maps.Clone(s.lists)
	if lists == nil {
		lists = map[string][]config.ImportedTool{}
	}
	lists[dep] = tools
	merged, err := s.base.Imported(lists)
	if err == nil {
		err = s.set(merged)
	}
	if err != nil {
		s.log("the refreshed tools of an MCP server do not fit the config; keeping the previous tools", "dependency", dep, "err", err)
	} else {
		s.lists = lists
		s.log("MCP server's tools refreshed", "dependency", dep, "tools", len(tools))
		for _, f := range s.toolsChanged.all() {
			f(merged)
		}
	}
	if s.hook != nil {
		s.hook(dep, err)
	}
}

// OnToolsChanged registers f to be called with the new config each time
// an MCP server's refreshed list was merged, after calls see it. The
// returned func unregisters f. Without MCP servers f is never called.
func (s *Sources) OnToolsChanged(f func(*config.Config)) (stop func()) {
	return s.toolsChanged.add(f)
}

// Close stops the pool (and every stdio server).
func (s *Sources) Close() {
	if s.pool != nil {
		s.pool.Close()
	}
	if s.http != nil {
		s.http.Close()
	}
}
