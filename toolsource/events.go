package toolsource

import "sync"

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
func (s *Sources) OnMCPEvents(e MCPEvents) (stop func()) { return s.events.add(e) }

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
