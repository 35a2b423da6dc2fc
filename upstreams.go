package toolgate

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/config/openapi"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/execute/mcpcall"
)

// DefaultImportTimeout bounds reading the OpenAPI documents, connecting
// to the MCP servers and listing their tools when a gateway opens.
const DefaultImportTimeout = 30 * time.Second

// upstreams is the gateway's side of its imported tools: the pool that
// calls its MCP servers (nil without any) and what is needed to merge a
// refreshed tool list (the OpenAPI documents' tools stay as read at Open).
type upstreams struct {
	pool *mcpcall.Pool
	http *execute.HTTP

	mu    sync.Mutex
	base  *config.Config // the config as loaded, imports not merged
	lists map[string][]config.ImportedTool
	set   func(*config.Config) error // swaps the pipeline's tools
	log   func(msg string, args ...any)
	hook  func(dependency string, err error)
	subs  map[int]func(*config.Config)
	next  int

	events mcpEvents // resources and prompts (mcpcatalogue.go)
}

// openUpstreams starts the MCP side of a gateway when cfg has MCP servers:
// it imports their tools (the returned config has them merged in) and
// returns the executor that calls them. Without MCP servers it returns cfg
// and exec unchanged.
func (g *Gateway) openUpstreams(ctx context.Context, cfg *config.Config, opts Options, exec execute.Executor) (*config.Config, execute.Executor, error) {
	hasMCP := mcpcall.HasMCP(cfg)
	if !hasMCP && !openapi.Has(cfg) {
		return cfg, exec, nil
	}
	u := &upstreams{base: cfg, hook: opts.ToolsRefreshed}
	if hasMCP {
		u.pool = mcpcall.New(cfg, mcpcall.Options{Clock: opts.Clock, Logger: opts.Logger, Stderr: opts.MCPStderr, OnToolsChanged: u.changed,
			OnResourceUpdated: u.events.resourceUpdated, OnCatalogueChanged: u.events.catalogueChanged})
	}
	if cfg.ImportsPending() && !opts.Offline {
		timeout := opts.ImportTimeout
		if timeout <= 0 {
			timeout = DefaultImportTimeout
		}
		ictx, cancel := context.WithTimeout(ctx, timeout)
		lists, err := importOpenAPI(ictx, cfg)
		if err == nil && hasMCP {
			var mcpLists map[string][]config.ImportedTool
			if mcpLists, err = u.pool.Import(ictx, cfg); err != nil {
				err = fmt.Errorf("toolgate: importing MCP tools: %w", err)
			}
			maps.Copy(lists, mcpLists)
		}
		cancel()
		if err != nil {
			u.close()
			return nil, nil, err
		}
		merged, err := cfg.Imported(lists)
		if err != nil {
			u.close()
			return nil, nil, err
		}
		u.mu.Lock()
		u.lists = lists
		u.mu.Unlock()
		cfg = merged
	}
	if exec == nil && hasMCP {
		u.http = execute.NewHTTP(execute.HTTPOptions{Clock: opts.Clock})
		exec = &execute.Router{HTTP: u.http, MCP: u.pool}
	}
	g.upstreams = u
	return cfg, exec, nil
}

// bind lets refreshes reach the pipeline once it exists.
func (u *upstreams) bind(set func(*config.Config) error, log func(string, ...any)) {
	u.mu.Lock()
	u.set, u.log = set, log
	u.mu.Unlock()
}

// changed merges a server's new tool list and swaps the pipeline's tools;
// a tool that disappeared then answers unknown_tool. A list that does not
// merge (an override now names nothing, say) keeps the old tools.
func (u *upstreams) changed(dep string, tools []config.ImportedTool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.set == nil || !u.base.HasImports() || u.base.Dependencies[dep] == nil || u.base.Dependencies[dep].Import == nil {
		return
	}
	lists := maps.Clone(u.lists)
	if lists == nil {
		lists = map[string][]config.ImportedTool{}
	}
	lists[dep] = tools
	merged, err := u.base.Imported(lists)
	if err == nil {
		err = u.set(merged)
	}
	if err != nil {
		u.log("the refreshed tools of an MCP server do not fit the config; keeping the previous tools", "dependency", dep, "err", err)
	} else {
		u.lists = lists
		u.log("MCP server's tools refreshed", "dependency", dep, "tools", len(tools))
		for _, f := range u.subs {
			f(merged)
		}
	}
	if u.hook != nil {
		u.hook(dep, err)
	}
}

// close stops the pool (and every stdio server).
func (u *upstreams) close() {
	if u.pool != nil {
		u.pool.Close()
	}
	if u.http != nil {
		u.http.Close()
	}
}

// reload makes cfg (normalized, imports not merged) the base that refreshed
// tool lists are merged into, and calls apply with cfg merged with the tool
// lists the servers gave. The MCP servers themselves are connected when the
// gateway opens: a reload that adds, removes or changes one is refused
// (restart toolgate for that). u.mu is held throughout, so a refresh
// arriving meanwhile merges into the new base, never the old one.
func (u *upstreams) reload(cfg *config.Config, apply func(*config.Config) error) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var changed []string
	for name, d := range u.base.Dependencies {
		if d == nil || d.MCP == nil {
			continue
		}
		if nd := cfg.Dependencies[name]; nd == nil || !reflect.DeepEqual(nd.MCP, d.MCP) {
			changed = append(changed, name)
		}
	}
	for name, d := range cfg.Dependencies {
		if d != nil && d.MCP != nil && (u.base.Dependencies[name] == nil || u.base.Dependencies[name].MCP == nil) {
			changed = append(changed, name)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return fmt.Errorf("dependencies %s: an MCP server is connected when toolgate starts; adding, removing or changing one needs a restart", strings.Join(changed, ", "))
	}
	merged, lists := cfg, u.lists
	if cfg.ImportsPending() {
		var err error
		if lists, err = u.reloadLists(cfg); err != nil {
			return err
		}
		if merged, err = cfg.Imported(lists); err != nil {
			return err
		}
	}
	if err := apply(merged); err != nil {
		return err
	}
	u.base, u.lists = cfg, lists
	return nil
}

// Imports is what Import found: the config with the imported tools merged
// in, and each importing dependency's list as its source gave it.
type Imports struct {
	// Config is the merged config.
	Config *config.Config
	// Lists are the tools each dependency listed, by dependency name.
	Lists map[string][]config.ImportedTool
	// Reports say, per OpenAPI document, how many operations were
	// imported, which were skipped and why, and the name collisions.
	Reports []*openapi.Report
}

// Import reads the OpenAPI documents of a loaded config and connects to
// its MCP servers that import tools, lists their tools and merges them in,
// then stops the servers: what a gateway opened on cfg would serve
// (`toolgate check`, `toolgate tools`, `toolgate whatif`). A config without
// imports comes back as it is. The error lists every document that cannot
// be read, every operation an import names that its document lacks, every
// server that could not be reached and every problem of the merge.
func Import(ctx context.Context, cfg *config.Config, timeout time.Duration) (*Imports, error) {
	if !cfg.ImportsPending() {
		return &Imports{Config: cfg}, nil
	}
	if timeout <= 0 {
		timeout = DefaultImportTimeout
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lists := map[string][]config.ImportedTool{}
	var reports []*openapi.Report
	if openapi.Has(cfg) {
		var err error
		if lists, reports, err = openapi.ImportAll(ictx, cfg, openapi.Options{}); err != nil {
			return &Imports{Config: cfg, Reports: reports}, err
		}
	}
	if mcpcall.HasMCP(cfg) {
		pool := mcpcall.New(cfg, mcpcall.Options{})
		defer pool.Close()
		mcpLists, err := pool.Import(ictx, cfg)
		if err != nil {
			return nil, err
		}
		maps.Copy(lists, mcpLists)
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return &Imports{Config: cfg, Lists: lists, Reports: reports}, err
	}
	return &Imports{Config: merged, Lists: lists, Reports: reports}, nil
}

// OnToolsChanged registers f to be called with the new config each time
// the tools change while the gateway runs (an MCP server's refreshed list
// was merged), after calls see them; the MCP endpoint uses it to update
// its own tool list. The returned func unregisters f. Without MCP servers
// the tools never change and f is never called.
func (g *Gateway) OnToolsChanged(f func(*config.Config)) (stop func()) {
	u := g.upstreams
	if u == nil {
		return func() {}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.subs == nil {
		u.subs = map[int]func(*config.Config){}
	}
	id := u.next
	u.next++
	u.subs[id] = f
	return func() {
		u.mu.Lock()
		delete(u.subs, id)
		u.mu.Unlock()
	}
}
