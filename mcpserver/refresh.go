package mcpserver

import (
	"github.com/toolgate/toolgate/config"
)

// syncTools makes the SDK server list cfg's tools: new and changed tools
// are added (replacing the old definition), vanished ones removed; the SDK
// tells the sessions with notifications/tools/list_changed.
func (s *server) syncTools(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[string]bool{}
	for _, t := range Tools(cfg) {
		s.mcp.AddTool(t, s.callTool)
		now[t.Name] = true
	}
	var gone []string
	for name := range s.listed {
		if !now[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	s.listed = now
}
