//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of MCP 2026-07-28 (SEP-2577), but toolgate relays them for the revisions that have them (docs/mcp-upstreams.md, "What reaches the MCP client").

package mcpcall

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller is the MCP client a call came from, when it came over MCP
// (toolgate's MCP server sets it with WithCaller): what the upstream sends
// it during the call is relayed to it.
type Caller struct {
	// Session is the caller's session with toolgate's MCP server.
	Session *mcp.ServerSession
	// ProgressToken is the caller's progressToken for the call, or nil.
	ProgressToken any
}

type callerKey struct{}

// WithCaller returns ctx carrying the MCP client that made the call.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	if c == nil || c.Session == nil {
		return nil
	}
	return c
}

// capabilities is what the caller declared that toolgate relays: the
// same capabilities toolgate then declares to the upstream.
func (c *Caller) capabilities() (sampling, elicitation, roots bool) {
	p := c.Session.InitializeParams()
	if p == nil || p.Capabilities == nil {
		return false, false, false
	}
	caps := p.Capabilities
	return caps.Sampling != nil, caps.Elicitation != nil, caps.RootsV2 != nil || caps.Roots != (mcp.RootCapabilities{})
}

// private reports whether the call needs a session of its own with the
// upstream: its caller wants progress, or may be asked (sampling,
// elicitation, roots). Everything the upstream sends on that session then
// belongs to this call, however many other calls are in flight.
func (c *Caller) private() bool {
	if c == nil {
		return false
	}
	s, e, r := c.capabilities()
	return c.ProgressToken != nil || s || e || r
}

// relay is one call's link to its caller, on the call's own session.
type relay struct {
	caller *Caller
	// call is the call's context, which carries the caller's request: a
	// notification sent with it goes on that request's own stream, ahead
	// of the call's answer (sent with the upstream's context, it would go
	// on the session's other stream, where a host may read it after the
	// answer, and then drop it).
	call context.Context

	mu      sync.Mutex
	seen    int // progress and logging notifications read off the wire
	handled int // ... and forwarded (or dropped) by the handlers
	changed chan struct{}
	asked   []string // "elicitation: accept", "sampling", "roots"
}

func newRelay(ctx context.Context, c *Caller) *relay {
	return &relay{caller: c, call: ctx, changed: make(chan struct{}, 1)}
}

// noteSeen counts a progress or logging notification read from the wire,
// before the SDK handles it.
func (r *relay) noteSeen() {
	r.mu.Lock()
	r.seen++
	r.mu.Unlock()
}

func (r *relay) noteHandled() {
	r.mu.Lock()
	r.handled++
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// drain waits until every notification read before the result has been
// forwarded to the caller, so that one sent just before the result is not
// lost; ctx bounds the wait.
func (r *relay) drain(ctx context.Context) {
	for {
		r.mu.Lock()
		done := r.handled >= r.seen
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			return
		}
	}
}

func (r *relay) noteAsked(what string) {
	r.mu.Lock()
	r.asked = append(r.asked, what)
	r.mu.Unlock()
}

// note is the sentence the call's observation gets about who was asked;
// "" for a call without a relay.
func (r *relay) note() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.asked) == 0 {
		return ""
	}
	return fmt.Sprintf("During the call the server asked the MCP client (%s).", strings.Join(r.asked, "; "))
}

// clientOptions are the options of the call's own client: the caller's
// capabilities, and handlers that relay to it.
func (r *relay) clientOptions(s *server) *mcp.ClientOptions {
	sampling, elicitation, roots := r.caller.capabilities()
	caps := &mcp.ClientCapabilities{}
	if roots {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	opts := &mcp.ClientOptions{
		Capabilities:           caps,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.toolsChanged() },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer r.noteHandled()
			p := *req.Params
			p.ProgressToken = r.caller.ProgressToken
			if p.ProgressToken != nil {
				_ = r.caller.Session.NotifyProgress(r.call, &p)
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			defer r.noteHandled()
			_ = r.caller.Session.Log(r.call, req.Params)
		},
	}
	if sampling {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			r.noteAsked("sampling/createMessage: a model was asked")
			return r.caller.Session.CreateMessage(ctx, req.Params)
		}
	}
	if elicitation {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res, err := r.caller.Session.Elicit(ctx, req.Params)
			action := "no answer"
			if err == nil && res != nil {
				action = res.Action
			}
			r.noteAsked("elicitation/create: a person was asked, action " + action)
			return res, err
		}
	}
	return opts
}

// rootsMiddleware answers the upstream's roots/list with the caller's
// roots: the SDK's client would answer with its own list.
func (r *relay) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		if _, _, roots := r.caller.capabilities(); !roots {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the MCP client of this call did not declare roots"}
		}
		r.noteAsked("roots/list")
		return r.caller.Session.ListRoots(ctx, &mcp.ListRootsParams{})
	}
}

// isRelayed reports whether a server notification is one the relay
// counts (progress, logging).
func isRelayed(method string) bool {
	return method == "notifications/progress" || method == "notifications/message"
}

// privateSession connects a session of the call's own: a new client
// declaring the caller's capabilities, with handlers that relay to it (a
// new subprocess for a stdio server). The caller closes it after the call.
// ctx bounds the connection.
func (s *server) privateSession(ctx context.Context, rl *relay) (*mcp.ClientSession, *trackedConn, error) {
	if _, _, err := s.current(); err != nil {
		return nil, nil, err
	}
	t, connp := s.transport(rl)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate", Version: s.opts.Version}, rl.clientOptions(s))
	client.AddReceivingMiddleware(rl.rootsMiddleware)
	cctx, stop := valueless(ctx)
	cs, err := client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: UpstreamRevision})
	stop()
	if err != nil {
		return nil, nil, err
	}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		// The upstream logs only once a level is set; the caller's own
		// level filters what toolgate relays.
		_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	}
	return cs, *connp, nil
}
