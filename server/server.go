package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// Defaults of Options.
const (
	// DefaultMaxDepth is the default of Options.MaxDepth.
	DefaultMaxDepth = 64
	// DefaultShutdownTimeout is the default of Options.ShutdownTimeout.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes keep-alive connections left idle this long.
	DefaultIdleTimeout = 120 * time.Second
	// BodyReadTimeout bounds reading one request, its headers and its
	// body, from its first byte to the body's last: a body sent slowly is
	// cut there, and so is the server's drain of a body it did not read.
	BodyReadTimeout = 30 * time.Second
	// WriteMargin is added to the slowest tool call to make the default
	// write timeout: room for the ownership lookup, the commit and the
	// answer itself.
	WriteMargin = 30 * time.Second
)

// Options configure a Server. Zero values are the documented defaults.
type Options struct {
	// Gateway runs the calls. Required.
	Gateway *toolgate.Gateway
	// Keys are the bearer keys of agent hosts. Default (nil): the gateway
	// config's auth.keys. None (nil with no keys configured, or an empty
	// slice) means development mode: no auth, every run visible, and Serve
	// refuses a non-loopback address.
	Keys []config.Key
	// Logger gets the gateway's refusals (one line each) and the server's
	// own messages. Default slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body. Default: the config's
	// max_body_bytes, else 1 MiB.
	MaxBodyBytes int64
	// MaxDepth bounds the nesting of a JSON body. Default 64.
	MaxDepth int
	// Mounts are routes other packages add (stats, metrics, dashboard,
	// MCP); the approvals and the OpenAPI document are the server's own.
	Mounts []Mount
	// ShutdownTimeout is how long Serve lets in-flight requests finish once
	// its context ends. Default 30s.
	ShutdownTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer. Default: the slowest configured tool call (its
	// timeout.total plus its ownership lookup's) plus WriteMargin. A call
	// of a tool that a reload made slower than that gets its own write
	// deadline: its tool's bound plus WriteMargin.
	WriteTimeout time.Duration
	// MaxConnsPerClient bounds the connections Serve holds open from one
	// client address; one more is closed at once (a warning is logged).
	// Behind a reverse proxy every client has the proxy's address. Default
	// DefaultMaxConnsPerClient (256).
	MaxConnsPerClient int
	// ReadTimeout bounds reading one request in Serve, its headers and its
	// body, from the first byte to the body's last; it is lifted once the
	// body has been read, so a call may then take as long as its tool
	// allows. Default BodyReadTimeout (30s).
	ReadTimeout time.Duration
}

// Mount is a route added by another package.
type Mount struct {
	// Pattern is a net/http pattern, e.g. "GET /v1/stats".
	Pattern string
	// Handler serves it. KeyName tells it the caller's key.
	Handler http.Handler
	// Public routes need no key (metrics, dashboard assets).
	Public bool
	// ResourceMetadata, when set, is the path of the route's OAuth 2.0
	// Protected Resource Metadata (RFC 9728): its 401 answers name that
	// document (resource_metadata in WWW-Authenticate), so that clients
	// such as MCP's read how to authenticate instead of guessing. An
	// absolute URL (under the config's public_url) is named as it is; a
	// path, under the address the request was sent to.
	ResourceMetadata string
}

// Server is toolgate's HTTP API. It is safe for concurrent use.
type Server struct {
	gw           *toolgate.Gateway
	keys         keyring
	pinned       map[string]*types.Principal // by key name: auth.keys[].principal
	log          *slog.Logger
	maxBody      int64
	maxDepth     int
	shutdown     time.Duration
	writeTimeout time.Duration
	maxConns     int
	readTimeout  time.Duration
	mux          *http.ServeMux
	inflight     atomic.Int64
	refusals     refusalLog // how 401s are logged (authlog.go)
}

// New checks opts and builds the routes. A mount whose pattern is invalid
// or conflicts with another route is an error.
func New(opts Options) (*Server, error) {
	if opts.Gateway == nil {
		return nil, errors.New("server: Options.Gateway is required")
	}
	cfg := opts.Gateway.Config()
	s := &Server{
		gw:           opts.Gateway,
		log:          opts.Logger,
		maxBody:      opts.MaxBodyBytes,
		maxDepth:     opts.MaxDepth,
		shutdown:     opts.ShutdownTimeout,
		writeTimeout: opts.WriteTimeout,
		maxConns:     opts.MaxConnsPerClient,
		readTimeout:  opts.ReadTimeout,
		mux:          http.NewServeMux(),
	}
	keys := opts.Keys
	if keys == nil {
		keys = cfg.Auth.Keys
	}
	var err error
	if s.keys, err = newKeyring(keys); err != nil {
		return nil, err
	}
	s.pinned = pinnedPrincipals(keys)
	s.setDefaults(cfg)
	for _, m := range append(s.routes(), opts.Mounts...) {
		if err := s.handle(m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setDefaults gives every limit Options left at zero its default; the
// body limit is the config's, and the write timeout outlasts the config's
// slowest call.
func (s *Server) setDefaults(cfg *config.Config) {
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.maxBody <= 0 {
		s.maxBody = cfg.MaxBodyBytes
		if s.maxBody <= 0 {
			s.maxBody = config.DefaultMaxBodyBytes
		}
	}
	if s.maxDepth <= 0 {
		s.maxDepth = DefaultMaxDepth
	}
	if s.shutdown <= 0 {
		s.shutdown = DefaultShutdownTimeout
	}
	if s.readTimeout <= 0 {
		s.readTimeout = BodyReadTimeout
	}
	if s.maxConns <= 0 {
		s.maxConns = DefaultMaxConnsPerClient
	}
	if s.writeTimeout <= 0 {
		s.writeTimeout = slowestCall(cfg) + WriteMargin
	}
}

// routes are the API's own routes (docs/http-api.md).
func (s *Server) routes() []Mount {
	return []Mount{
		// Routes that take query parameters check them themselves
		// (strictQuery); noQuery refuses any on the others. /healthz and
		// /v1/openapi.json, fetched by probes and tools that may add
		// cache-busting parameters, are left as they are.
		{Pattern: "POST /v1/runs", Handler: s.noQuery(s.createRun)},
		{Pattern: "GET /v1/runs", Handler: http.HandlerFunc(s.listRuns)},
		{Pattern: "POST /v1/runs/{run}/calls", Handler: s.noQuery(s.postCall)},
		{Pattern: "GET /v1/runs/{run}", Handler: http.HandlerFunc(s.getRun)},
		{Pattern: "GET /v1/runs/{run}/replay", Handler: http.HandlerFunc(s.replay)},
		{Pattern: "GET /v1/executions", Handler: http.HandlerFunc(s.listExecutions)},
		{Pattern: "GET /v1/tools", Handler: http.HandlerFunc(s.listTools)},
		{Pattern: "GET /healthz", Handler: http.HandlerFunc(s.healthz), Public: true},
		{Pattern: "GET /v1/config", Handler: s.noQuery(s.getConfig)},
		{Pattern: "GET /v1/openapi.json", Handler: http.HandlerFunc(s.getOpenAPI), Public: true},
		{Pattern: "GET /v1/approvals", Handler: http.HandlerFunc(s.listApprovals)},
		{Pattern: "GET /v1/approvals/{id}", Handler: s.noQuery(s.getApproval)},
		{Pattern: "POST /v1/approvals/{id}", Handler: s.noQuery(s.decideApproval)},
		{Pattern: "GET /v1/quotas", Handler: s.noQuery(s.listQuotas)},
		{Pattern: "GET /v1/summary", Handler: http.HandlerFunc(s.summary)},
	}
}

// handle registers one route, turning the mux's panic on a bad or
// conflicting pattern into an error.
func (s *Server) handle(m Mount) (err error) {
	if m.Handler == nil {
		return fmt.Errorf("server: mount %q has no handler", m.Pattern)
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("server: route %q: %v", m.Pattern, v)
		}
	}()
	h := m.Handler
	if !m.Public {
		h = s.authenticated(h, m.ResourceMetadata)
	}
	s.mux.Handle(m.Pattern, routed(h))
	return nil
}

// Handler is the whole API as one http.Handler: routes, auth, JSON
// envelopes for unknown routes and methods, and recovery from panics.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// InFlight is the number of tool calls being handled right now.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// WriteTimeout is the write timeout Serve gives its http.Server.
func (s *Server) WriteTimeout() time.Duration { return s.writeTimeout }

// slowestCall is the longest a configured tool call may take (callBound).
func slowestCall(cfg *config.Config) time.Duration {
	var longest time.Duration
	for _, t := range cfg.Tools {
		if t != nil {
			longest = max(longest, callBound(cfg, t))
		}
	}
	return longest
}

// callBound is the longest one call of t may take: its total deadline plus
// its ownership lookup's, which runs before that deadline starts.
func callBound(cfg *config.Config, t *config.Tool) time.Duration {
	d := t.Timeout.Total.D()
	if t.Owner != nil {
		if lt := cfg.Tools[t.Owner.Lookup]; lt != nil {
			d += lt.Timeout.Total.D()
		}
	}
	return d
}
