package mcpcall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/clock"
)

// errClosed is the error of a server whose pool was closed.
var errClosed = errors.New("the MCP client is closed")

// server manages the session with one MCP server: it connects on first use
// (or at Import), reconnects after the session ends, and, for a stdio
// server, restarts the subprocess with backoff when it dies.
type server struct {
	name  string
	mcp   config.MCP
	opts  *Options
	http  *http.Client // streamable HTTP only
	clock clock.Clock
	log   *slog.Logger

	connecting chan struct{} // a one-slot lock: held while connecting
	closing    chan struct{} // call sessions being closed (release)

	mu        sync.Mutex
	cs        *mcp.ClientSession
	conn      *trackedConn
	deaths    int  // consecutive sessions that ended, for the restart backoff
	connected bool // a session was made before: a new one is a reconnect
	closed    bool
	done      chan struct{}  // closed by close
	cat       catalogueState // resource subscriptions (catalogue.go)

	refreshing bool // a refresh of the tools runs
	again      bool // a notification came during it: refresh once more
	wg         sync.WaitGroup
}

func newServer(name string, m config.MCP, opts *Options) *server {
	s := &server{
		name: name, mcp: m, opts: opts, clock: opts.Clock, log: opts.Logger,
		connecting: make(chan struct{}, 1), closing: make(chan struct{}, maxClosing), done: make(chan struct{}),
	}
	if !m.Stdio() {
		// No redirects: a 3xx is the server's answer, and the configured
		// headers (credentials) never reach another origin.
		s.http = &http.Client{
			Transport: &headerTransport{
				base:    &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second},
				headers: m.Headers,
				origin:  origin(m.URL),
			},
			CheckRedirect: noRedirects,
		}
	}
	return s
}

// session returns the live session, connecting (and initialising) one if
// there is none. ctx bounds the connection: the connect timeout.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, *trackedConn, error) {
	if cs, conn, err := s.current(); cs != nil || err != nil {
		return cs, conn, err
	}
	select {
	case s.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	case <-s.done:
		return nil, nil, errClosed
	}
	defer func() { <-s.connecting }()
	if cs, conn, err := s.current(); cs != nil || err != nil {
		return cs, conn, err // another caller connected meanwhile
	}
	return s.connect(ctx)
}

func (s *server) current() (*mcp.ClientSession, *trackedConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errClosed
	}
	return s.cs, s.conn, nil
}

// UpstreamRevision is the MCP revision toolgate offers an upstream server
// in initialize; a server that knows only older ones answers with its own,
// and the session speaks that. Not 2026-07-28: in it a server cannot send
// sampling, elicitation or roots requests during a call, which toolgate
// relays to its caller (docs/mcp-upstreams.md, "What reaches the MCP client").
const UpstreamRevision = "2025-11-25"

// valueless is a context with ctx's deadline and cancellation but none of
// its values. A session with an upstream is made under it: the caller's
// context may carry the revision of the caller's own request (a stateless
// 2026-07-28 call to toolgate), which the SDK would otherwise send to the
// upstream in place of UpstreamRevision. stop releases it: the SDK uses
// the context of Connect only to connect and initialise (its connection
// neither keeps its cancellation nor its deadline), so it is stopped as
// soon as Connect returns.
func valueless(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.Background())
	if d, ok := ctx.Deadline(); ok {
		var cancelD context.CancelFunc
		c, cancelD = context.WithDeadline(c, d)
		prev := cancel
		cancel = func() { cancelD(); prev() }
	}
	unhook := context.AfterFunc(ctx, cancel)
	return c, func() { unhook(); cancel() }
}

// connect starts (stdio) or reaches (HTTP) the server and initialises a
// session. The caller holds the connecting slot.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, *trackedConn, error) {
	t, connp := s.transport(nil)
	copts := &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.toolsChanged() },
	}
	s.catalogueOptions(copts)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate", Version: s.opts.Version}, copts)
	cctx, stop := valueless(ctx)
	cs, err := client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: UpstreamRevision})
	stop()
	if err != nil {
		return nil, nil, err
	}
	conn := *connp
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cs.Close()
		return nil, nil, errClosed
	}
	s.cs, s.conn = cs, conn
	again := s.connected
	s.connected = true
	s.wg.Add(1)
	s.mu.Unlock()
	go s.watch(cs)
	if again {
		// A new session after one that ended (a restart of the process or
		// of the HTTP server): its tools may have changed.
		s.toolsChanged()
		s.reconnected()
	}
	return cs, conn, nil
}

// transport is the transport of a new session with the server, and where
// its tracked connection (stdio) is kept once connected. rl, for a call's
// own session, counts the notifications read.
func (s *server) transport(rl *relay) (mcp.Transport, **trackedConn) {
	var t mcp.Transport
	if s.mcp.Stdio() {
		cmd := exec.Command(s.mcp.Command[0], s.mcp.Command[1:]...)
		cmd.Dir = s.mcp.Dir
		cmd.Env = os.Environ()
		for _, k := range sortedKeys(s.mcp.Env) {
			cmd.Env = append(cmd.Env, k+"="+s.mcp.Env[k])
		}
		cmd.Stderr = newCappedStderr(s.opts.Stderr, s.log, s.name)
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: s.opts.TerminateDuration}
	} else {
		// The SDK's reconnects (its default 5) resume a broken event stream
		// with GET and Last-Event-ID; they never send a request again.
		t = &mcp.StreamableClientTransport{Endpoint: s.mcp.URL, HTTPClient: s.http,
			MaxEventSize: execute.DefaultMaxResponseBytes}
	}
	conn := new(*trackedConn)
	if s.mcp.Stdio() {
		// The stdio connection is wrapped to know which requests were
		// written and to keep raw answers (exact numbers). The streamable
		// HTTP connection is not: the SDK relies on interfaces of its own
		// connection type; its requests are tracked by headerTransport.
		t = connectHook{&trackedTransport{Transport: t, relay: rl}, conn}
	}
	return t, conn
}

// connectHook is the tracked transport, remembering the connection it made.
type connectHook struct {
	t    *trackedTransport
	conn **trackedConn
}

// Connect connects and keeps the connection.
func (h connectHook) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := h.t.Connect(ctx)
	if err == nil {
		*h.conn = c.(*trackedConn)
	}
	return c, err
}

// watch waits for the session to end. A stdio server that died is started
// again after a backoff, and its tools are listed again (they may have
// changed with the restart).
func (s *server) watch(cs *mcp.ClientSession) {
	defer s.wg.Done()
	err := cs.Wait()
	cs.Close() // ends what the session still holds (its subscription stream)
	s.mu.Lock()
	if s.cs == cs {
		s.cs, s.conn = nil, nil
	}
	closed := s.closed
	s.deaths++
	deaths := s.deaths
	s.mu.Unlock()
	if closed || !s.mcp.Stdio() {
		return
	}
	wait := backoff(s.mcp.RestartBase.D(), s.mcp.RestartCap.D(), deaths)
	s.log.Warn("MCP server ended; restarting", "dependency", s.name, "err", err, "in", wait)
	ctx, cancel := s.stopContext()
	defer cancel()
	if s.clock.Sleep(ctx, wait) != nil {
		return
	}
	cctx, ccancel := context.WithTimeout(ctx, config.DefaultConnectTimeout*5)
	defer ccancel()
	if _, _, err := s.session(cctx); err != nil {
		s.log.Warn("MCP server restart failed; the next call tries again", "dependency", s.name, "err", err)
	}
	// The new session lists the tools again (connect).
}

// healthy records that the session answered: the restart backoff starts
// again from its base.
func (s *server) healthy() {
	s.mu.Lock()
	s.deaths = 0
	s.mu.Unlock()
}

// maxClosing bounds the call sessions of one server that release closes
// in the background at once; past it a call closes its own before it
// answers, so that a burst of calls cannot pile up processes.
const maxClosing = 8

// release closes a call's own session (relay.go) off the call's path:
// closing a stdio server's session waits for the process to exit, up to
// TerminateDuration before it is signalled (5s for a server that does not
// exit when its stdin ends, as server-everything does not), and the
// call's answer does not depend on it. close waits for these.
func (s *server) release(cs *mcp.ClientSession) {
	s.mu.Lock()
	if s.closed || len(s.closing) == cap(s.closing) {
		s.mu.Unlock()
		cs.Close()
		return
	}
	s.closing <- struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		cs.Close()
		<-s.closing
	}()
}

// dropped forgets a session that broke, so that the next call connects
// again.
func (s *server) dropped(cs *mcp.ClientSession) {
	s.mu.Lock()
	if s.cs == cs {
		s.cs, s.conn = nil, nil
	}
	s.mu.Unlock()
	cs.Close()
}

// stopContext is a context that ends when the server is closed.
func (s *server) stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(doneContext{s.done}, cancel)
	return ctx, func() { stop(); cancel() }
}

// toolsChanged handles notifications/tools/list_changed: the tools are
// listed again off the SDK's reading goroutine. Notifications coalesce: at
// most one refresh runs per server, and any number of notifications that
// arrive meanwhile make one more refresh after it, not one each.
func (s *server) toolsChanged() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.refreshing {
		s.again = true
		s.mu.Unlock()
		return
	}
	s.refreshing = true
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := s.stopContext()
		defer cancel()
		for {
			s.refresh(ctx)
			s.mu.Lock()
			if !s.again || s.closed {
				s.refreshing, s.again = false, false
				s.mu.Unlock()
				return
			}
			s.again = false
			s.mu.Unlock()
		}
	}()
}

// refresh lists the tools and hands them to the pool's OnToolsChanged.
func (s *server) refresh(ctx context.Context) {
	if s.opts.OnToolsChanged == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	tools, err := s.list(ctx)
	if err != nil {
		s.log.Warn("listing the MCP server's tools failed; keeping the previous list", "dependency", s.name, "err", err)
		return
	}
	s.opts.OnToolsChanged(s.name, tools)
}

// listTimeout bounds one tools/list (all its pages).
const listTimeout = 30 * time.Second

// Bounds of one listing of a server's tools: an endless or huge listing
// is cut rather than followed.
const (
	// maxListPages bounds the pages of one tools/list.
	maxListPages = 100
	// maxListTools bounds the tools of one server.
	maxListTools = 5000
)

// list connects if needed and lists every tool, all pages (at most
// maxListPages, and the first maxListTools tools; a cursor seen before ends
// the listing, with a warning).
// A tool toolgate cannot take (a schema past the bounds, say) is left out
// with a warning: the others still come in.
func (s *server) list(ctx context.Context) ([]config.ImportedTool, error) {
	cs, _, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: connecting: %w", s.name, err)
	}
	var out []config.ImportedTool
	seen, names := map[string]bool{}, map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("%s: tools/list: %w", s.name, err)
		}
		for _, t := range res.Tools {
			if len(out) == maxListTools {
				break
			}
			it, err := importedTool(s.name, t)
			if err == nil && names[t.Name] {
				err = fmt.Errorf("%s: the server lists the tool %q twice; keeping the first", s.name, t.Name)
			}
			if err != nil {
				s.log.Warn("an MCP tool was left out", "dependency", s.name, "err", err)
				continue
			}
			names[t.Name] = true
			out = append(out, it)
		}
		next := res.NextCursor
		if next == "" {
			break
		}
		if len(out) == maxListTools {
			s.log.Warn("the MCP server lists more tools than toolgate takes from one server; keeping the first", "dependency", s.name, "tools", maxListTools)
			break
		}
		if seen[next] || page == maxListPages {
			s.log.Warn("the MCP server's tools/list did not end; keeping the pages read", "dependency", s.name,
				"pages", page, "repeated_cursor", seen[next])
			break
		}
		seen[next] = true
		params = &mcp.ListToolsParams{Cursor: next}
	}
	s.healthy()
	return out, nil
}

// close ends the session (a stdio server's stdin is closed, then it is
// signalled) and waits for the server's goroutines.
func (s *server) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	cs := s.cs
	s.cs, s.conn = nil, nil
	s.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	s.wg.Wait()
}

// backoff is base * 2^(n-1), at most limit.
func backoff(base, limit time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// doneContext is a context.Context that is done when done is closed; it
// carries no values and no deadline.
type doneContext struct{ done chan struct{} }

func (doneContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c doneContext) Done() <-chan struct{}     { return c.done }
func (c doneContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}
func (doneContext) Value(any) any { return nil }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
