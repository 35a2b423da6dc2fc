package execute

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/config"
)

// attemptKey is the request-context key of the *attemptState.
type attemptKey struct{}

// attemptState is what one HTTP attempt shares with the transport's dialer
// and with the httptrace hooks, which run on the transport's goroutines.
type attemptState struct {
	// connectTimeout bounds dialling plus the TLS handshake.
	connectTimeout time.Duration
	// readTimeout bounds the time from the request being written to the
	// whole response being read.
	readTimeout time.Duration
	// ctx is the attempt's context. The transport dials on a context
	// detached from the request's cancellation (so that a dial may complete
	// for a later request); the dialer joins it back to the attempt so that
	// no dial outlives the attempt. It lives only as long as the attempt.
	ctx context.Context
	// cancel ends the attempt with a cause.
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	connected bool // a connection was obtained (the last one, if several)
	reused    bool // that connection came from the idle pool
	wrote     bool // a request was fully written (on any connection)
	finished  bool // Do has returned or is returning: start no timer
	timer     *time.Timer
}

// errReadTimeout is the cause of an attempt cancelled by its read timer.
var errReadTimeout = errors.New("read timeout")

// gotConn is the httptrace GotConn hook.
func (st *attemptState) gotConn(reused bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.connected = true
	st.reused = reused
}

// wroteRequest is the httptrace WroteRequest hook: on success it starts the
// read timer, once.
func (st *attemptState) wroteRequest(err error) {
	if err != nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.wrote = true
	if st.timer != nil || st.finished {
		return
	}
	st.timer = time.AfterFunc(st.readTimeout, func() { st.cancel(errReadTimeout) })
}

// finish stops the read timer; no timer starts after it.
func (st *attemptState) finish() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.finished = true
	if st.timer != nil {
		st.timer.Stop()
	}
}

// progress returns whether a request was written and whether the last
// connection came from the pool.
func (st *attemptState) progress() (wrote, gotConn, reused bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.wrote, st.connected, st.reused
}

// dialError is a failure to connect (TCP or TLS), already classified.
type dialError struct {
	kind      Kind
	transient bool
	addr      string
	timeout   time.Duration
	err       error
}

// Error is a one-line description naming the address.
func (e *dialError) Error() string {
	switch e.kind {
	case KindConnectRefused:
		return "connection refused by " + e.addr
	case KindConnectTimeout:
		return fmt.Sprintf("no connection to %s within %s", e.addr, e.timeout)
	}
	return fmt.Sprintf("cannot connect to %s: %v", e.addr, e.err)
}

// Unwrap returns the dialer's error.
func (e *dialError) Unwrap() error { return e.err }

// dialer dials for every transport of an HTTP executor, with the connect
// timeout of the attempt in the context.
type dialer struct {
	net net.Dialer
	tls *tls.Config // base TLS config, cloned per connection
}

// connectContext bounds one dial by the attempt's connect timeout, and ends
// it when either the transport's context or the attempt ends. It derives from
// the transport's context, which keeps the request's values (httptrace hooks
// among them) but not its cancellation.
func connectContext(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		dctx, cancel := context.WithTimeout(ctx, config.DefaultConnectTimeout)
		return dctx, cancel, config.DefaultConnectTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, st.connectTimeout)
	stop := context.AfterFunc(st.ctx, cancel)
	return dctx, func() { stop(); cancel() }, st.connectTimeout
}

// dial opens a TCP connection: the transport's DialContext.
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	dctx, cancel, timeout := connectContext(ctx)
	defer cancel()
	conn, err := d.net.DialContext(dctx, network, addr)
	if err != nil {
		return nil, classifyDial(dctx, addr, timeout, err)
	}
	return conn, nil
}

// dialTLS opens a TCP connection and completes the TLS handshake, both
// within the connect timeout: the transport's DialTLSContext. It offers
// HTTP/1.1 only, so that a cancelled attempt closes its own connection.
func (d *dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	dctx, cancel, timeout := connectContext(ctx)
	defer cancel()
	raw, err := d.net.DialContext(dctx, network, addr)
	if err != nil {
		return nil, classifyDial(dctx, addr, timeout, err)
	}
	cfg := &tls.Config{}
	if d.tls != nil {
		cfg = d.tls.Clone()
	}
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(dctx); err != nil {
		raw.Close()
		return nil, classifyDial(dctx, addr, timeout, fmt.Errorf("TLS handshake: %w", err))
	}
	return conn, nil
}

// classifyDial turns a dial or handshake error into a *dialError. A dial
// ended by the attempt's own cancellation is classified later, from the
// attempt's context.
func classifyDial(dctx context.Context, addr string, timeout time.Duration, err error) *dialError {
	e := &dialError{kind: KindConnectFailed, transient: true, addr: addr, timeout: timeout, err: err}
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e.kind = KindConnectRefused
	case errors.Is(dctx.Err(), context.DeadlineExceeded), isTimeout(err):
		e.kind = KindConnectTimeout
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority),
		errors.As(err, &hostname), errors.As(err, &invalid):
		// A certificate problem does not fix itself on retry.
		e.transient = false
	}
	return e
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
