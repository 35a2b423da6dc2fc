package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// DefaultSessionTimeout is the default of Options.SessionTimeout.
const DefaultSessionTimeout = 30 * time.Minute

// DevPrincipalID is the principal of runs opened when no keys are
// configured.
const DevPrincipalID = "mcp"

// Instructions are sent to MCP clients at initialisation.
const Instructions = "Every tool call goes through toolgate. Each result's text is an observation written " +
	"for you: it says what happened and what to do next (fix the arguments, wait, verify with a named read tool, " +
	"escalate). Follow it. Never repeat a write whose outcome is unknown as a new action."

// Options configure the MCP server. Zero values are the documented defaults.
type Options struct {
	// Key names the auth.keys entry whose principal runs act for when a
	// call carries no bearer key (stdio and other non-HTTP transports).
	// Default: the only entry when exactly one is configured. With no keys
	// configured it must be empty (development mode, principal {"id":
	// "mcp"}). Over HTTP the bearer key decides and Key is not used.
	Key string
	// RunID, when set, is the run of every call that does not name one in
	// its _meta, instead of one run per session (on HTTP: of every session).
	// It is created on first use, owned by the first caller's key.
	RunID string
	// Logger gets the SDK's messages and store failures. Default: discarded.
	Logger *slog.Logger
	// Version is the server version sent at initialisation. Default: the
	// main module's version from the build, else "dev".
	Version string
	// SessionTimeout closes HTTP sessions idle this long. Default 30m.
	SessionTimeout time.Duration
	// MaxSessionsPerKey bounds the HTTP sessions one key holds open at a
	// time: an initialize past it is answered 429. Default
	// DefaultMaxSessionsPerKey. The stateless revision (2026-07-28) opens
	// no sessions and is not bounded by it.
	MaxSessionsPerKey int
	// MaxBodyBytes bounds an HTTP request body. Default: the config's
	// max_body_bytes, else 1 MiB.
	MaxBodyBytes int64
	// ToolsChanged, when set, tells Serve that the gateway's tools or its
	// keys' catalogues changed (a reload, an upstream's new tool list): the
	// session's list is updated and, if it changed, the client is sent
	// notifications/tools/list_changed. Over HTTP call
	// HTTPHandler.Refresh instead.
	ToolsChanged <-chan struct{}
}

// server is one MCP server over one gateway: an SDK server per key with a
// tool per tool that key sees (keyServer), and the state that maps
// sessions to runs.
type server struct {
	gw    *toolgate.Gateway
	view  view // the tools and catalogues: the gateway's
	cfg   *config.Config
	opts  Options
	log   *slog.Logger
	keys  keyring
	local caller // who calls when there is no bearer key (stdio)
	impl  *mcp.Implementation
	// http is set for Handler's server, where a session without an id is
	// a stateless (2026-07-28) request; sessions counts its sessions.
	http     bool
	sessions *sessionCap

	mu       sync.Mutex
	anonRuns map[*mcp.ServerSession]string // runs of sessions without an id
	servers  map[string]*keyServer         // by key name ("" without keys)
	seen     atomic.Pointer[config.Config] // the configuration the lists were made from
	cat      *upstreamCat                  // imported resources and prompts; nil without (upstreamcat.go)
}

// newServer prepares the server; each key's SDK server is made on its
// first session (serverFor). When Options.Key does not pick a caller for
// keyless calls, s.local says why and such calls are refused.
func newServer(gw *toolgate.Gateway, opts Options) *server {
	s := &server{gw: gw, view: gw, cfg: gw.Config(), opts: opts, log: opts.Logger,
		anonRuns: map[*mcp.ServerSession]string{}, servers: map[string]*keyServer{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.keys = newKeyring(s.cfg.Auth.Keys)
	s.local = localCaller(s.cfg.Auth.Keys, opts.Key)
	version := opts.Version
	if version == "" {
		version = buildVersion()
	}
	s.impl = &mcp.Implementation{Name: "toolgate", Title: "toolgate", Version: version}
	s.seen.Store(s.cfg)
	s.startCatalogue()
	return s
}

// HTTPHandler is the streamable HTTP endpoint (Handler).
type HTTPHandler struct {
	s         *server
	stopWatch func()
	h         http.Handler // route, behind the key check
	stateful  http.Handler // the SDK's handler of session-based revisions
	stateless http.Handler // the SDK's handler of 2026-07-28
	sessions  *sessionCap
	maxBody   int64
	timeout   time.Duration
	closing   chan struct{}
	once      sync.Once
}

// Handler serves MCP over streamable HTTP, to be mounted at /mcp: the
// stateless revision 2026-07-28 (server/discover, no initialize, no
// Mcp-Session-Id) and the session-based revisions (2025-11-25, 2025-06-18,
// 2025-03-26) on the same URL, chosen per request (route). With keys
// configured every request needs "Authorization: Bearer KEY" (401
// otherwise); a session belongs to the key that opened it (403 for any
// other), and its run acts for that key's principal. A key holds at most
// Options.MaxSessionsPerKey sessions (429 past it). Call Close when the
// server shuts down.
func Handler(gw *toolgate.Gateway, opts Options) *HTTPHandler {
	s := newServer(gw, opts) // HTTP callers bring their key: Options.Key is not needed
	timeout := opts.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		if maxBody = s.cfg.MaxBodyBytes; maxBody <= 0 {
			maxBody = config.DefaultMaxBodyBytes
		}
	}
	maxSessions := opts.MaxSessionsPerKey
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessionsPerKey
	}
	s.http, s.sessions = true, newSessionCap(maxSessions)
	hh := &HTTPHandler{s: s, sessions: s.sessions, maxBody: maxBody, timeout: timeout, closing: make(chan struct{})}
	hh.stateful = mcp.NewStreamableHTTPHandler(s.forRequest, &mcp.StreamableHTTPOptions{
		Logger: s.log, SessionTimeout: timeout, MaxRequestBodyBytes: maxBody,
	})
	hh.stateless = mcp.NewStreamableHTTPHandler(s.forRequest, &mcp.StreamableHTTPOptions{
		Logger: s.log, Stateless: true, MaxRequestBodyBytes: maxBody,
	})
	hh.h = http.HandlerFunc(hh.route)
	if len(s.keys) > 0 {
		// The token's UserID is the key name: the SDK binds each session to it.
		hh.h = auth.RequireBearerToken(s.keys.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(hh.h)
	}
	// An imported MCP server's new tool list reaches the sessions at once
	// (a reload, at their next request: followView).
	stopTools, stopCat := gw.OnToolsChanged(func(*config.Config) { s.refresh() }), s.watchCatalogue()
	hh.stopWatch = func() { stopTools(); stopCat() }
	return hh
}

// ServeHTTP implements http.Handler. A GET (a session's standing stream of
// server messages) is exempt from the server's write timeout and ends when
// Close is called; POSTs (the calls) are left to finish.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		h.h.ServeHTTP(w, r)
		return
	}
	select {
	case <-h.closing:
		http.Error(w, "toolgate is shutting down", http.StatusServiceUnavailable)
		return
	default:
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	h.h.ServeHTTP(w, r.WithContext(ctx))
}

// Close ends the sessions' standing streams (so that a graceful shutdown
// need not wait for them) and refuses new ones. Calls in flight finish.
// The sessions themselves stay open until their idle timeout, or until
// CloseSessions.
func (h *HTTPHandler) Close() {
	h.once.Do(func() { close(h.closing); h.stopWatch() })
}

// CloseSessions closes every session that is still open, so that nothing
// of theirs outlives the handler: call it once the HTTP server has
// drained its requests (after http.Server.Shutdown), since a call still
// in flight on a closed session loses its answer. It implies Close.
func (h *HTTPHandler) CloseSessions() {
	h.Close()
	h.s.mu.Lock()
	servers := make([]*mcp.Server, 0, len(h.s.servers))
	for _, ks := range h.s.servers {
		servers = append(servers, ks.mcp)
	}
	h.s.mu.Unlock()
	for _, srv := range servers {
		// Collected first: a closing session removes itself from the list.
		for _, ss := range slices.Collect(srv.Sessions()) {
			_ = ss.Close()
		}
	}
}

// Serve runs one MCP session over t (for stdio, &mcp.StdioTransport{})
// until the client hangs up (nil) or ctx ends (its error). Nothing but
// protocol messages is written to t. Each receive on
// Options.ToolsChanged updates the session's tool list (Refresh).
func Serve(ctx context.Context, gw *toolgate.Gateway, opts Options, t mcp.Transport) error {
	s := newServer(gw, opts)
	defer gw.OnToolsChanged(func(*config.Config) { s.refresh() })()
	defer s.watchCatalogue()()
	return s.serve(ctx, t)
}

func (s *server) serve(ctx context.Context, t mcp.Transport) error {
	if s.local.refused != "" {
		return errors.New(s.local.refused)
	}
	ss, err := s.serverFor(s.local.key).mcp.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	changed := s.opts.ToolsChanged
wait:
	for {
		select {
		case err = <-done:
			break wait
		case _, open := <-changed:
			if !open {
				changed = nil // closed: no more changes will be told
				continue
			}
			s.refresh()
		case <-ctx.Done():
			ss.Close()
			<-done
			return ctx.Err()
		}
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

// caller is who a call acts for.
type caller struct {
	// key is the auth.keys entry's name ("" in development mode).
	key       string
	principal types.Principal
	// refused, when set, says why calls without a bearer key cannot run.
	refused string
}

// localCaller picks the caller of calls without a bearer key.
func localCaller(keys []config.Key, name string) caller {
	if len(keys) == 0 {
		if name != "" {
			return caller{refused: fmt.Sprintf("mcp: no auth.keys are configured, so there is no key %q", name)}
		}
		return caller{principal: types.Principal{ID: DevPrincipalID}}
	}
	if name == "" && len(keys) == 1 {
		name = keys[0].Name
	}
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if k.Name == name {
			return keyCaller(k)
		}
		names = append(names, k.Name)
	}
	if name == "" {
		return caller{refused: fmt.Sprintf("mcp: %d auth.keys are configured; choose whose principal the runs act for (one of: %s)",
			len(keys), strings.Join(names, ", "))}
	}
	return caller{refused: fmt.Sprintf("mcp: no auth.keys entry is named %q (have: %s)", name, strings.Join(names, ", "))}
}

// keyCaller is the caller of a key: its principal, or {"id": name}.
func keyCaller(k config.Key) caller {
	c := caller{key: k.Name, principal: types.Principal{ID: k.Name}}
	if k.Principal != nil {
		c.principal = *k.Principal
	}
	return c
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
