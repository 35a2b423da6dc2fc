package toolgate

import (
	"context"
	"sync"

	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/pipeline"
)

// UpstreamRead is a read of an imported MCP server that is not a tool
// call (resources/read, prompts/get, completion/complete): see
// pipeline.Read.
type UpstreamRead = pipeline.Read

// MCPPool is the client of the configuration's MCP servers (their
// catalogues of resources and prompts, their subscriptions); nil when the
// configuration has none.
func (g *Gateway) MCPPool() *mcpcall.Pool {
	if g.upstreams == nil {
		return nil
	}
	return g.upstreams.pool
}

// ReadUpstream runs r under its server's circuit breaker and timeout and
// records it as one execution row of its run, like a read tool call. The
// error is non-nil only for an unknown run or a store failure.
func (g *Gateway) ReadUpstream(ctx context.Context, r *UpstreamRead) (*Result, error) {
	return g.pipeline.Read(ctx, r)
}

// MCPEvents are told what the imported MCP servers say about their
// catalogues.
type MCPEvents struct {
	// ResourceUpdated gets notifications/resources/updated of a resource
	// toolgate subscribed to. It must not block.
	ResourceUpdated func(dependency, uri string)
	// CatalogueChanged is called after a server's resources or prompts
	// list changed (or its session was made again).
	CatalogueChanged func(dependency string)
}

// OnMCPEvents registers e; the returned func unregisters it. Without MCP
// servers nothing is ever told.
func (g *Gateway) OnMCPEvents(e MCPEvents) (stop func()) {
	if g.upstreams == nil {
		return func() {}
	}
	return g.upstreams.events.add(e)
}

// mcpEvents fans the pool's catalogue notifications out to the edges.
type mcpEvents struct {
	mu   sync.Mutex
	subs map[int]MCPEvents
	next int
}

func (m *mcpEvents) add(e MCPEvents) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.subs == nil {
		m.subs = map[int]MCPEvents{}
	}
	id := m.next
	m.next++
	m.subs[id] = e
	return func() {
		m.mu.Lock()
		delete(m.subs, id)
		m.mu.Unlock()
	}
}

func (m *mcpEvents) all() []MCPEvents {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MCPEvents, 0, len(m.subs))
	for _, e := range m.subs {
		out = append(out, e)
	}
	return out
}

func (m *mcpEvents) resourceUpdated(dep, uri string) {
	for _, e := range m.all() {
		if e.ResourceUpdated != nil {
			e.ResourceUpdated(dep, uri)
		}
	}
}

func (m *mcpEvents) catalogueChanged(dep string) {
	for _, e := range m.all() {
		if e.CatalogueChanged != nil {
			e.CatalogueChanged(dep)
		}
	}
}
