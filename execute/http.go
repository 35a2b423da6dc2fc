package execute

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/types"
)

// DefaultMaxResponseBytes bounds a dependency's answer when
// HTTPOptions.MaxResponseBytes is zero.
const DefaultMaxResponseBytes = 8 << 20

// DefaultUserAgent is sent when HTTPOptions.UserAgent is empty.
const DefaultUserAgent = "toolgate"

// maxIdleConnsPerHost keeps enough warm connections to a dependency for high
// call rates.
const maxIdleConnsPerHost = 256

// HTTPOptions configures the HTTP executor. Every zero value is a documented
// default.
type HTTPOptions struct {
	// Clock reads the time for Retry-After dates. Default clock.Real{}.
	// Timeouts use real timers: they bound real I/O.
	Clock clock.Clock
	// MaxResponseBytes bounds an answer's body; a bigger one is a failure
	// of kind too_large. Default 8 MiB.
	MaxResponseBytes int64
	// UserAgent is the User-Agent header. Default "toolgate".
	UserAgent string
	// TLSConfig is the base TLS configuration for https dependencies (for
	// example a private RootCAs pool). Default: the system's roots. Only
	// HTTP/1.1 is offered, whatever its NextProtos say, so that a cancelled
	// attempt closes its own connection.
	TLSConfig *tls.Config
}

// HTTP is the executor of HTTP tools. It keeps one *http.Transport per
// dependency, created on first use, and is safe for concurrent use.
//
// Redirects are not followed: a 3xx is a failure of kind status. Go's
// transport may itself replay a request on a fresh connection when a pooled
// one turns out to be dead, but only when nothing was written, or for GET and
// requests that carry an Idempotency-Key header; such a replay is part of the
// one attempt and is always safe.
type HTTP struct {
	clock     clock.Clock
	maxBytes  int64
	userAgent string
	dialer    *dialer

	mu         sync.RWMutex
	transports map[string]*http.Transport
}

// NewHTTP returns an HTTP executor.
func NewHTTP(opts HTTPOptions) *HTTP {
	h := &HTTP{
		clock:      opts.Clock,
		maxBytes:   opts.MaxResponseBytes,
		userAgent:  opts.UserAgent,
		dialer:     &dialer{tls: opts.TLSConfig},
		transports: make(map[string]*http.Transport),
	}
	if h.clock == nil {
		h.clock = clock.Real{}
	}
	if h.maxBytes <= 0 {
		h.maxBytes = DefaultMaxResponseBytes
	}
	if h.userAgent == "" {
		h.userAgent = DefaultUserAgent
	}
	return h
}

// Close closes the idle connections of every transport. The executor may
// still be used afterwards; it dials again.
func (h *HTTP) Close() {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, t := range h.transports {
		t.CloseIdleConnections()
	}
}

// transport returns the dependency's transport, creating it on first use.
func (h *HTTP) transport(dep *config.Dependency) *http.Transport {
	key := dep.Name
	if key == "" {
		key = dep.BaseURL
	}
	h.mu.RLock()
	t, ok := h.transports[key]
	h.mu.RUnlock()
	if ok {
		return t
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.transports[key]; ok {
		return t
	}
	t = &http.Transport{
		Proxy:               nil, // direct: see the package doc
		DialContext:         h.dialer.dial,
		DialTLSContext:      h.dialer.dialTLS,
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
	}
	h.transports[key] = t
	return t
}

// Do sends one request and reads the whole answer, within the tool's
// connect and read timeouts.
func (h *HTTP) Do(ctx context.Context, a *Attempt) (*Response, *Failure) {
	built, placed, fail := h.build(a)
	if fail != nil {
		return nil, fail
	}
	dep := dependencyName(a, built.url)

	attemptCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	st := &attemptState{
		connectTimeout: orDefault(a.Tool.Timeout.Connect.D(), config.DefaultConnectTimeout),
		readTimeout:    orDefault(a.Tool.Timeout.Read.D(), config.DefaultReadTimeout),
		ctx:            attemptCtx,
		cancel:         cancel,
	}
	defer st.finish()
	reqCtx := context.WithValue(attemptCtx, attemptKey{}, st)
	reqCtx = httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{
		GotConn:      func(info httptrace.GotConnInfo) { st.gotConn(info.Reused) },
		WroteRequest: func(info httptrace.WroteRequestInfo) { st.wroteRequest(info.Err) },
	})

	req, err := http.NewRequestWithContext(reqCtx, built.method, built.url, built.bodyReader())
	if err != nil {
		return nil, invalidRequest(a, err.Error())
	}
	setPlacedHeaders(req, a, placed)
	h.setHeaders(req, a, built.body != nil)
	traceRequest(ctx, req)

	resp, err := h.transport(a.Dependency).RoundTrip(req)
	if err != nil {
		return nil, h.classify(ctx, attemptCtx, st, dep, err)
	}
	// Closing without draining a body that was not read to the end makes
	// the transport close the connection rather than pool it.
	defer resp.Body.Close()

	body, err := io.ReadAll(io.LimitReader(resp.Body, h.maxBytes+1))
	if err != nil {
		return nil, h.classify(ctx, attemptCtx, st, dep, err)
	}
	st.finish()
	if int64(len(body)) > h.maxBytes {
		return nil, &Failure{
			Kind:      KindTooLarge,
			Delivered: true,
			Status:    resp.StatusCode,
			Code:      types.CodeUpstreamError,
			Message:   fmt.Sprintf("%s answered %d with more than %d bytes, the limit", dep, resp.StatusCode, h.maxBytes),
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusFailure(dep, resp.StatusCode, resp.Header, body, h.clock.Now())
	}
	data, depth := bodyDataDepth(body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Data: data, DataDepth: depth}, nil
}

// setHeaders sets the dependency's headers, Accept, User-Agent, the content
// type of a body and the operation key. The dependency's headers may
// override Accept and User-Agent; nothing overrides the operation key.
func (h *HTTP) setHeaders(req *http.Request, a *Attempt, hasBody bool) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", h.userAgent)
	for k, v := range a.Dependency.Headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if header := a.Tool.Idempotency.Header; header != "" && a.OperationKey != "" {
		req.Header.Set(header, a.OperationKey)
	}
}

// classify turns a transport or body-read error into a Failure. The order
// matters: our own read timer, then the caller's cancellation, then what the
// connection had got to when it broke.
func (h *HTTP) classify(parent, attemptCtx context.Context, st *attemptState, dep string, err error) *Failure {
	wrote, gotConn, reused := st.progress()
	cause := context.Cause(attemptCtx)

	if errors.Is(cause, errReadTimeout) {
		return &Failure{
			Kind: KindReadTimeout, Delivered: true, Transient: true,
			Code:    types.CodeTimeoutUnknownOutcome,
			Message: fmt.Sprintf("no answer from %s within %s after the request was sent", dep, st.readTimeout),
			Err:     err,
		}
	}
	if parent.Err() != nil {
		// The request may have gone out even if it was not fully written on
		// a reused connection; only a fresh one that was never written to
		// proves non-delivery.
		delivered := wrote || (gotConn && reused)
		f := &Failure{Kind: KindCanceled, Delivered: delivered, Err: context.Cause(parent)}
		if delivered {
			f.Code = types.CodeTimeoutUnknownOutcome
			f.Message = fmt.Sprintf("the call was cancelled after the request to %s was sent (%v)", dep, context.Cause(parent))
		} else {
			f.Code = types.CodeUnavailable
			f.Message = fmt.Sprintf("the call was cancelled before the request to %s was sent (%v)", dep, context.Cause(parent))
		}
		return f
	}
	var dialErr *dialError
	if errors.As(err, &dialErr) {
		f := &Failure{Kind: dialErr.kind, Delivered: wrote, Transient: dialErr.transient, Message: dialErr.Error(), Err: err}
		f.Code = types.CodeConnectFailed
		if dialErr.kind == KindConnectTimeout {
			f.Code = types.CodeConnectTimeout
		}
		return f
	}
	if !wrote && !(gotConn && reused) {
		// A fresh connection broke before the request was written: the
		// dependency cannot have acted on it.
		return &Failure{
			Kind: KindConnectFailed, Delivered: false, Transient: true,
			Code:    types.CodeConnectFailed,
			Message: fmt.Sprintf("the connection to %s broke before the request was sent: %v", dep, err),
			Err:     err,
		}
	}
	return &Failure{
		Kind: KindReset, Delivered: true, Transient: true,
		Code:    types.CodeTimeoutUnknownOutcome,
		Message: fmt.Sprintf("the connection to %s broke after the request was sent: %v", dep, err),
		Err:     err,
	}
}

// dependencyName names the dependency in messages: its config name, the
// tool's dependency field, or the URL's host.
func dependencyName(a *Attempt, rawURL string) string {
	if a.Dependency != nil && a.Dependency.Name != "" {
		return a.Dependency.Name
	}
	if a.Tool != nil && a.Tool.Dependency != "" {
		return a.Tool.Dependency
	}
	if u, err := url.Parse(rawURL); err == nil {
		return u.Host
	}
	return "the dependency"
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
