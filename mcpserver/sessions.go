package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxSessionsPerKey is the default of Options.MaxSessionsPerKey.
const DefaultMaxSessionsPerKey = 100

// sessionCap counts the open HTTP sessions of each key: those initialised
// (live, until they end: closed by the client, or idle past the session
// timeout) and those being initialised (pending), so that a key cannot hold
// more than max.
type sessionCap struct {
	max int

	mu      sync.Mutex
	live    map[string]map[string]bool // key -> session id -> open
	pending map[string]int
}

func newSessionCap(max int) *sessionCap {
	return &sessionCap{max: max, live: map[string]map[string]bool{}, pending: map[string]int{}}
}

// reserve takes a place for a session the key is opening, or reports that
// the key has none left.
func (c *sessionCap) reserve(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.live[key])+c.pending[key] >= c.max {
		return false
	}
	c.pending[key]++
	return true
}

// unreserve gives back the place reserve took, once the initialize has been
// answered (the session, if one was made, is counted as live by then).
func (c *sessionCap) unreserve(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[key]--; c.pending[key] <= 0 {
		delete(c.pending, key)
	}
}

// open counts a key's initialised session until it ends.
func (c *sessionCap) open(key string, ss *mcp.ServerSession) {
	id := ss.ID()
	c.mu.Lock()
	if c.live[key] == nil {
		c.live[key] = map[string]bool{}
	}
	if c.live[key][id] {
		c.mu.Unlock()
		return
	}
	c.live[key][id] = true
	c.mu.Unlock()
	go func() {
		_ = ss.Wait()
		c.forget(key, id)
	}()
}

// forget stops counting a session: it ended (closed, or idle past the
// timeout), or its DELETE was answered.
func (c *sessionCap) forget(key, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live[key], id)
	if len(c.live[key]) == 0 {
		delete(c.live, key)
	}
}

// countSessions is receiving middleware that counts each HTTP session a
// key's server initialises (sessions over stdio, and the stateless
// revision's, have no id and are not counted).
func (s *server) countSessions(key string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, r mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, r)
			if method != "initialize" || err != nil || s.sessions == nil {
				return res, err
			}
			if ss, ok := r.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				s.sessions.open(key, ss)
			}
			return res, err
		}
	}
}
