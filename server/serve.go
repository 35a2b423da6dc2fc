package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
)

// ErrInsecureListen is returned for a non-loopback address when no keys
// are configured.
var ErrInsecureListen = errors.New("no auth keys are configured, so toolgate only listens on a loopback address (127.0.0.1 or ::1); add auth.keys to the config to listen elsewhere")

// CheckAddr refuses to serve on addr when the server runs without keys
// and addr is not a loopback address. A host name is accepted here and
// checked again on the listener's address.
func (s *Server) CheckAddr(addr string) error {
	if len(s.keys) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("listen address %q (every interface): %w", addr, ErrInsecureListen)
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
		return fmt.Errorf("listen address %q: %w", addr, ErrInsecureListen)
	}
	return nil
}

// CheckListener is CheckAddr on the address ln is bound to.
func (s *Server) CheckListener(ln net.Listener) error {
	if len(s.keys) > 0 {
		return nil
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	if u, ok := ln.Addr().(*net.UnixAddr); ok && u != nil {
		return nil // a socket file: only this host reaches it
	}
	return fmt.Errorf("listen address %s: %w", ln.Addr(), ErrInsecureListen)
}

// Serve answers requests on ln until ctx ends, then shuts down gracefully:
// it stops accepting, lets in-flight requests finish for up to
// Options.ShutdownTimeout (their calls are recorded even if their clients
// have gone), and returns. It returns an error when requests were still
// running at that deadline, or when ln fails. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.CheckListener(ln); err != nil {
		ln.Close()
		return err
	}
	ln = limitPerClient(ln, s.maxConns, func(host string) {
		s.log.Warn("connection refused: the client holds too many open connections", "client", host, "limit", s.maxConns)
	})
	hs := &http.Server{
		Handler:           bodyDeadline(s.Handler()),
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       s.readTimeout, // headers and body; lifted once the body is read (bodyDeadline)
		IdleTimeout:       DefaultIdleTimeout,
		WriteTimeout:      s.writeTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: no new requests; waiting for the calls in flight",
		"in_flight", s.InFlight(), "deadline", s.shutdown.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.shutdown)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		left := s.InFlight()
		hs.Close()
		<-served
		return fmt.Errorf("shutdown: %s still running after %s; their operations are marked unknown at the next start and verified before anything is sent again", callCount(left), s.shutdown)
	}
	<-served
	s.log.Info("shut down cleanly")
	return nil
}

// callCount is "1 call" or "N calls".
func callCount(n int64) string {
	if n == 1 {
		return "1 call"
	}
	return strconv.FormatInt(n, 10) + " calls"
}
