package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

// view is where the tool lists come from: the gateway's current
// configuration and its keys' catalogues (a reload replaces both).
type view interface {
	Config() *config.Config
	Catalogue(key string) *config.Catalogue
}

// keyServer is the MCP server of one key's sessions: it holds the tools
// that key's lists show, so tools/list answers only those, and the SDK
// sends notifications/tools/list_changed to its sessions (and no others)
// when sync adds, removes or changes one.
type keyServer struct {
	key string
	mcp *mcp.Server

	mu   sync.Mutex
	defs map[string][]byte // tool name -> its definition as JSON
}

// has reports whether the key's list shows the tool.
func (ks *keyServer) has(name string) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	_, ok := ks.defs[name]
	return ok
}

// sync makes the server's tools be tools: it removes the ones gone, adds
// the new ones and replaces the ones whose definition changed. The SDK
// notifies the server's sessions once (debounced) when anything changed.
func (ks *keyServer) sync(tools []*mcp.Tool, handler mcp.ToolHandler) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	want := make(map[string][]byte, len(tools))
	for _, t := range tools {
		def, _ := json.Marshal(t)
		want[t.Name] = def
		if string(ks.defs[t.Name]) != string(def) {
			ks.mcp.AddTool(t, handler)
		}
	}
	var gone []string
	for name := range ks.defs {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		ks.mcp.RemoveTools(gone...)
	}
	ks.defs = want
}

// listed returns the MCP definitions of the tools the key's lists show:
// its tools: list, narrowed by the key's pinned principal (which is the
// principal of its sessions' runs).
func (s *server) listed(key string) []*mcp.Tool {
	cfg := s.view.Config()
	return Tools(export.Subset(cfg, s.view.Catalogue(key).Listed))
}

// serverFor returns the MCP server of a key's sessions, making it on
// first use.
func (s *server) serverFor(key string) *keyServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks, ok := s.servers[key]; ok {
		return ks
	}
	ks := &keyServer{key: key, mcp: mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       s.log,
		// Tools only; their list changes when a reload or an upstream
		// changes what this key sees.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})}
	ks.mcp.AddReceivingMiddleware(s.followView, s.unknownTools(ks), s.countSessions(key))
	ks.sync(s.listed(key), s.callTool)
	s.servers[key] = ks
	return ks
}

// forRequest is the server of an HTTP request's key (the bearer key's
// name, which the SDK's token check put in the context), or of
// development mode.
func (s *server) forRequest(r *http.Request) *mcp.Server {
	s.refreshIfChanged()
	key := ""
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		key = ti.UserID
	}
	return s.serverFor(key).mcp
}

// refreshIfChanged refreshes when the view's configuration is not the one
// the lists were last made from (a reload swapped it), so that the first
// request after a reload, on any session, brings every list up to date
// even when nobody called Refresh.
func (s *server) refreshIfChanged() {
	cfg := s.view.Config()
	if seen := s.seen.Load(); seen == cfg || !s.seen.CompareAndSwap(seen, cfg) {
		return
	}
	s.refresh()
}

// refresh brings every key's server up to date with the view: each session
// whose list changes is sent notifications/tools/list_changed.
func (s *server) refresh() {
	s.seen.Store(s.view.Config())
	s.mu.Lock()
	servers := make([]*keyServer, 0, len(s.servers))
	for _, ks := range s.servers {
		servers = append(servers, ks)
	}
	s.mu.Unlock()
	for _, ks := range servers {
		ks.sync(s.listed(ks.key), s.callTool)
	}
}

// Refresh re-reads the gateway's tools and its keys' catalogues and
// updates what each session lists; a session whose list changed is sent
// notifications/tools/list_changed. Call it after the gateway's
// configuration changed (a reload, an upstream's new tool list).
func (h *HTTPHandler) Refresh() { h.s.refresh() }

// followView is receiving middleware that brings the lists up to date
// before each request when the configuration changed (refreshIfChanged).
func (s *server) followView(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, r mcp.Request) (mcp.Result, error) {
		s.refreshIfChanged()
		return next(ctx, method, r)
	}
}
