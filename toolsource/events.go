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

// subscribers is a set of callbacks that may come and go while others
// are being told.
type subscribers[T any] struct {
	mu   sync.Mutex
	subs map[int]T
	next int
}

// add registers v; the returned func unregisters it.
func (s *subscribers[T]) add(v T) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[int]T{}
	}
	id := s.next
	s.next++
	s.subs[id] = v
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

// all returns the registered callbacks, to be called without the lock.
func (s *subscribers[T]) all() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, 0, len(s.subs))
	for _, v := range s.subs {
		out = append(out, v)
	}
	return out
}

// mcpEvents fans the pool's catalogue notifications out to the edges.
type mcpEvents struct{ subscribers[MCPEvents] }

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
