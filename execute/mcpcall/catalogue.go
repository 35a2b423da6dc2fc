package mcpcall

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
)

// Bounds of one listing of a server's resources, resource templates or
// prompts: a server that pages on and on (or lists millions of items) is
// cut here, and what was read so far is kept.
const (
	// MaxListPages is the most pages read of one list.
	MaxListPages = 50
	// MaxListItems is the most items kept of one list.
	MaxListItems = 5000
)

// Catalogue is what an MCP server offers beside its tools: its resources,
// resource templates and prompts, as listed (every one, not only the ones
// an import selects), and whether it takes subscriptions and completions.
type Catalogue struct {
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
	Prompts   []*mcp.Prompt
	// Subscribe says the server takes resources/subscribe.
	Subscribe bool
	// Completions says the server answers completion/complete.
	Completions bool
	// Truncated names the lists cut by MaxListPages or MaxListItems.
	Truncated []string
}

// catalogueState is a server's side of resource subscriptions: the URIs
// toolgate subscribed to on the client's behalf, with how many of its own
// sessions asked for each, so that the server hears one subscribe per URI
// and the last unsubscribe, and a new session subscribes to them again.
type catalogueState struct {
	mu   sync.Mutex
	subs map[string]int
}

// Catalogue lists the resources, templates and prompts of the dependency's
// server (connecting if needed), each list at most MaxListPages pages and
// MaxListItems items. A server without the capability has an empty list.
func (p *Pool) Catalogue(ctx context.Context, dep string) (*Catalogue, error) {
	s := p.servers[dep]
	if s == nil {
		return nil, fmt.Errorf("no MCP server named %q", dep)
	}
	cs, _, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: connecting: %w", dep, err)
	}
	out := &Catalogue{}
	var caps *mcp.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	out.Completions = caps.Completions != nil
	if caps.Resources != nil {
		out.Subscribe = caps.Resources.Subscribe
		if err := out.listResources(ctx, cs); err != nil {
			return nil, fmt.Errorf("%s: %w", dep, err)
		}
	}
	if caps.Prompts != nil {
		if err := out.listPrompts(ctx, cs); err != nil {
			return nil, fmt.Errorf("%s: %w", dep, err)
		}
	}
	s.healthy()
	return out, nil
}

// listResources lists the session's resources and resource templates into
// c.
func (c *Catalogue) listResources(ctx context.Context, cs *mcp.ClientSession) error {
	var err error
	c.Resources, err = listInto(c, "resources", "resources/list", func(cursor string) ([]*mcp.Resource, string, error) {
		r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
	if err != nil {
		return err
	}
	c.Templates, err = listInto(c, "resource templates", "resources/templates/list", func(cursor string) ([]*mcp.ResourceTemplate, string, error) {
		r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
	return err
}

// listPrompts lists the session's prompts into c.
func (c *Catalogue) listPrompts(ctx context.Context, cs *mcp.ClientSession) error {
	var err error
	c.Prompts, err = listInto(c, "prompts", "prompts/list", func(cursor string) ([]*mcp.Prompt, string, error) {
		r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
	return err
}

// listInto is listAll for one list of c, what, read with method: a list
// a bound cut is named in c.Truncated, and an error names the method.
func listInto[T any](c *Catalogue, what, method string, page func(cursor string) ([]T, string, error)) ([]T, error) {
	all, cut, err := listAll(page)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if cut {
		c.Truncated = append(c.Truncated, what)
	}
	return all, nil
}

// listAll follows a list's cursors, at most MaxListPages pages and
// MaxListItems items; cut says a bound stopped it.
func listAll[T any](page func(cursor string) ([]T, string, error)) (all []T, cut bool, err error) {
	cursor := ""
	for n := 0; ; n++ {
		if n == MaxListPages {
			return all, true, nil
		}
		items, next, err := page(cursor)
		if err != nil {
			return all, false, err
		}
		for _, it := range items {
			if len(all) == MaxListItems {
				return all, true, nil
			}
			all = append(all, it)
		}
		if next == "" || next == cursor {
			return all, false, nil
		}
		cursor = next
	}
}

// CatalogueDependencies lists, sorted, the MCP dependencies of cfg whose
// import serves resources or prompts.
func CatalogueDependencies(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.ImportingDependencies() {
		if d := cfg.Dependencies[name]; d.MCP != nil && d.Import.ServesCatalogue() {
			out = append(out, name)
		}
	}
	return out
}

// Subscribe subscribes toolgate to the resource on the dependency's server
// when none of its sessions was subscribed to it yet; the server's
// notifications/resources/updated then reach Options.OnResourceUpdated.
func (p *Pool) Subscribe(ctx context.Context, dep, uri string) error {
	s := p.servers[dep]
	if s == nil {
		return fmt.Errorf("no MCP server named %q", dep)
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if s.cat.subs[uri] > 0 {
		s.cat.subs[uri]++
		return nil
	}
	cs, _, err := s.session(ctx)
	if err != nil {
		return err
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	if s.cat.subs == nil {
		s.cat.subs = map[string]int{}
	}
	s.cat.subs[uri] = 1
	return nil
}

// Unsubscribe undoes one Subscribe; the last one unsubscribes toolgate on
// the server. An unsubscribe of a URI toolgate is not subscribed to does
// nothing.
func (p *Pool) Unsubscribe(ctx context.Context, dep, uri string) error {
	s := p.servers[dep]
	if s == nil {
		return fmt.Errorf("no MCP server named %q", dep)
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	switch n := s.cat.subs[uri]; {
	case n == 0:
		return nil
	case n > 1:
		s.cat.subs[uri] = n - 1
		return nil
	}
	delete(s.cat.subs, uri)
	cs, _, err := s.current()
	if err != nil || cs == nil {
		return err // no session: the server holds no subscription of toolgate's
	}
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// catalogueOptions adds to a session's client options the handlers of the
// catalogue's notifications.
func (s *server) catalogueOptions(o *mcp.ClientOptions) {
	o.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if f := s.opts.OnResourceUpdated; f != nil && req.Params != nil {
			f(s.name, req.Params.URI)
		}
	}
	changed := func() {
		if f := s.opts.OnCatalogueChanged; f != nil {
			s.background(func(context.Context) { f(s.name) })
		}
	}
	o.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { changed() }
	o.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { changed() }
}

// reconnected runs after a new session replaced one that ended: it
// subscribes again to every URI toolgate's sessions are subscribed to, and
// tells OnCatalogueChanged (the catalogue may have changed with a restart).
func (s *server) reconnected() {
	s.background(func(ctx context.Context) {
		s.cat.mu.Lock()
		uris := make([]string, 0, len(s.cat.subs))
		for uri := range s.cat.subs {
			uris = append(uris, uri)
		}
		s.cat.mu.Unlock()
		if len(uris) > 0 {
			ctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			if cs, _, err := s.session(ctx); err == nil {
				for _, uri := range uris {
					if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
						s.log.Warn("subscribing again to an MCP resource failed", "dependency", s.name, "uri", uri, "err", err)
					}
				}
			}
		}
		if f := s.opts.OnCatalogueChanged; f != nil {
			f(s.name)
		}
	})
}

// background runs f on a goroutine of the server (off the SDK's reading
// goroutine) with a context that ends when the server closes; close waits
// for it.
func (s *server) background(f func(ctx context.Context)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := s.stopContext()
		defer cancel()
		f(ctx)
	}()
}
