package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute/mcpcall"
)

// catalogueListTimeout bounds listing one server's resources, templates
// and prompts.
const catalogueListTimeout = 30 * time.Second

// upstreamCat holds the catalogues of the imported MCP servers whose
// import serves resources or prompts (each as the server listed it), and
// which of toolgate's sessions subscribed to which resource.
type upstreamCat struct {
	pool *mcpcall.Pool

	mu   sync.Mutex
	raw  map[string]*mcpcall.Catalogue            // by dependency
	subs map[*mcp.ServerSession]map[string]string // session -> uri -> dependency
}

// served is one key's share of the catalogues: what its sessions list,
// where each item comes from.
type served struct {
	resources map[string]servedItem // by URI
	templates map[string]servedItem // by URI template
	prompts   map[string]servedItem // by the name toolgate serves
	defs      map[string][]byte     // "r "+uri, "t "+template, "p "+name -> definition
}

// servedItem is one resource, template or prompt: its server and its name
// there, and its definition as served.
type servedItem struct {
	dep, remote string
	resource    *mcp.Resource
	template    *mcp.ResourceTemplate
	prompt      *mcp.Prompt
}

// startCatalogue lists the catalogues (when the config serves any) and
// follows their changes. It is called once, by newServer.
func (s *server) startCatalogue() {
	pool := s.gw.MCPPool()
	deps := mcpcall.CatalogueDependencies(s.cfg)
	if pool == nil || len(deps) == 0 {
		return
	}
	s.cat = &upstreamCat{pool: pool, raw: map[string]*mcpcall.Catalogue{}, subs: map[*mcp.ServerSession]map[string]string{}}
	for _, dep := range deps {
		s.loadCatalogue(dep)
	}
}

// loadCatalogue lists one server's catalogue again; on failure the
// previous one stays.
func (s *server) loadCatalogue(dep string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), catalogueListTimeout)
	defer cancel()
	c, err := s.cat.pool.Catalogue(ctx, dep)
	if err != nil {
		s.log.Warn("listing an MCP server's resources and prompts failed; keeping the previous lists", "dependency", dep, "err", err)
		return false
	}
	if len(c.Truncated) > 0 {
		s.log.Warn("an MCP server's lists were cut at toolgate's bounds", "dependency", dep, "lists", c.Truncated,
			"max_pages", mcpcall.MaxListPages, "max_items", mcpcall.MaxListItems)
	}
	s.cat.mu.Lock()
	s.cat.raw[dep] = c
	s.cat.mu.Unlock()
	return true
}

// watchCatalogue registers for the servers' catalogue notifications; the
// returned func stops it.
func (s *server) watchCatalogue() func() {
	if s.cat == nil {
		return func() {}
	}
	return s.gw.OnMCPEvents(toolgateEvents(s))
}

// catalogueChanged lists a server's catalogue again and updates every
// key's server: their sessions get list_changed when their lists changed.
func (s *server) catalogueChanged(dep string) {
	if s.loadCatalogue(dep) {
		s.refresh()
	}
}

// resourceUpdated relays notifications/resources/updated to the sessions
// subscribed to the resource (the SDK knows which; a key's sessions could
// only subscribe to what the key sees).
func (s *server) resourceUpdated(_, uri string) {
	s.mu.Lock()
	servers := slices.Collect(maps.Values(s.servers))
	s.mu.Unlock()
	go func() {
		for _, ks := range servers {
			_ = ks.mcp.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}()
}

// servedFor works out what the key sees of the catalogues under cfg: the
// items each import selects, narrowed by the key's resources: and
// prompts: lists. A URI (or template, or prompt name) two servers serve is
// the first one's, by dependency name.
func (s *server) servedFor(cfg *config.Config, key string) *served {
	out := &served{resources: map[string]servedItem{}, templates: map[string]servedItem{}, prompts: map[string]servedItem{}, defs: map[string][]byte{}}
	if s.cat == nil {
		return out
	}
	k := keyEntry(cfg, key)
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	for _, dep := range mcpcall.CatalogueDependencies(cfg) {
		c := s.cat.raw[dep]
		if c == nil {
			continue
		}
		im := cfg.Dependencies[dep].Import
		for _, r := range c.Resources {
			sr := *r
			sr.Name = im.Prefix + r.Name
			if _, dup := out.resources[r.URI]; dup || !im.SelectsResource(r.URI, r.Name) || !k.SeesResource(r.URI, sr.Name) {
				continue
			}
			out.resources[r.URI] = servedItem{dep: dep, remote: r.URI, resource: &sr}
			out.defs["r "+r.URI], _ = json.Marshal(&sr)
		}
		for _, t := range c.Templates {
			st := *t
			st.Name = im.Prefix + t.Name
			if _, dup := out.templates[t.URITemplate]; dup || !im.SelectsResource(t.URITemplate, t.Name) || !k.SeesResource(t.URITemplate, st.Name) {
				continue
			}
			out.templates[t.URITemplate] = servedItem{dep: dep, remote: t.URITemplate, template: &st}
			out.defs["t "+t.URITemplate], _ = json.Marshal(&st)
		}
		for _, p := range c.Prompts {
			sp := *p
			sp.Name = im.Prefix + p.Name
			if _, dup := out.prompts[sp.Name]; dup || !im.SelectsPrompt(p.Name) || !k.SeesPrompt(sp.Name) {
				continue
			}
			out.prompts[sp.Name] = servedItem{dep: dep, remote: p.Name, prompt: &sp}
			out.defs["p "+sp.Name], _ = json.Marshal(&sp)
		}
	}
	return out
}

// keyEntry is the auth.keys entry of that name; nil (sees everything) for
// no key.
func keyEntry(cfg *config.Config, name string) *config.Key {
	for i := range cfg.Auth.Keys {
		if cfg.Auth.Keys[i].Name == name {
			return &cfg.Auth.Keys[i]
		}
	}
	if name != "" {
		return &config.Key{Name: name, Resources: []string{}, Prompts: []string{}} // a removed key sees nothing
	}
	return nil
}

// syncCatalogue makes the key's server hold exactly what the key sees of
// the catalogues; the SDK tells its sessions what changed (list_changed).
func (s *server) syncCatalogue(ks *keyServer) {
	if s.cat == nil {
		return
	}
	want := s.servedFor(s.view.Config(), ks.key)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	old := ks.cat
	if old == nil {
		old = &served{defs: map[string][]byte{}}
	}
	var goneR, goneT, goneP []string
	for id := range old.defs {
		if _, ok := want.defs[id]; ok {
			continue
		}
		switch id[0] {
		case 'r':
			goneR = append(goneR, id[2:])
		case 't':
			goneT = append(goneT, id[2:])
		default:
			goneP = append(goneP, id[2:])
		}
	}
	if len(goneR) > 0 {
		ks.mcp.RemoveResources(goneR...)
	}
	if len(goneT) > 0 {
		ks.mcp.RemoveResourceTemplates(goneT...)
	}
	if len(goneP) > 0 {
		ks.mcp.RemovePrompts(goneP...)
	}
	for id, def := range want.defs {
		if string(old.defs[id]) == string(def) {
			continue
		}
		if err := s.addServed(ks, id, want); err != nil {
			s.log.Warn("an imported MCP resource or prompt cannot be served", "item", id[2:], "err", err)
			delete(want.defs, id)
		}
	}
	ks.cat = want
}

// addServed adds one item to the key's server. The SDK panics on a URI or
// URI template it cannot parse: such an item is left out.
func (s *server) addServed(ks *keyServer, id string, want *served) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	switch id[0] {
	case 'r':
		it := want.resources[id[2:]]
		ks.mcp.AddResource(it.resource, s.readResource(ks, it.dep))
	case 't':
		it := want.templates[id[2:]]
		ks.mcp.AddResourceTemplate(it.template, s.readResource(ks, it.dep))
	default:
		it := want.prompts[id[2:]]
		ks.mcp.AddPrompt(it.prompt, s.getPrompt(ks, it.dep, it.remote))
	}
	return nil
}

// catalogueOptions are the server options of a key's server when the
// config serves resources or prompts: the capabilities of what the
// imported servers offer, and the handlers of completion and
// subscriptions.
func (s *server) catalogueOptions(key string, o *mcp.ServerOptions) {
	if s.cat == nil {
		return
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	var resources, prompts, subscribe, completions bool
	for dep, c := range s.cat.raw {
		im := s.cfg.Dependencies[dep].Import
		resources = resources || len(im.Resources) > 0
		prompts = prompts || len(im.Prompts) > 0
		subscribe = subscribe || (c.Subscribe && len(im.Resources) > 0)
		completions = completions || c.Completions
	}
	if resources {
		o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: subscribe}
	}
	if prompts {
		o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if completions {
		o.CompletionHandler = s.complete(key)
	}
	if subscribe {
		o.SubscribeHandler, o.UnsubscribeHandler = s.subscribe(key), s.unsubscribe(key)
	}
}
