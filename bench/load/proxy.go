package load

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// NewProxy is the baseline: net/http/httputil.ReverseProxy to target with
// a transport tuned for one busy upstream (a large idle pool, no
// compression, no HTTP/2 attempt).
func NewProxy(target *url.URL) http.Handler {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		ErrorLog:  log.New(io.Discard, "", 0),
	}
}

// ProxyReady is what ServeProxy prints before the URL it listens on.
const ProxyReady = "proxy listening on "

// ServeProxy serves the baseline proxy to target on listen until ctx
// ends, after printing ProxyReady and its URL to w.
func ServeProxy(ctx context.Context, w io.Writer, listen, target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("proxy: target %q: want http://HOST:PORT", target)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: NewProxy(u), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(w, "%shttp://%s\n", ProxyReady, ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
