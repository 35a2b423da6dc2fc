package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConnsPerClient is the default of Options.MaxConnsPerClient.
const DefaultMaxConnsPerClient = 256

// bodyDeadline lets a request's read deadline (the http.Server's
// ReadTimeout, from the start of the request) hold until its body has been
// read to the end, and only then lifts it, so that a call may take as long
// as its tool allows. A body that is never read to the end (refused, too
// large, or sent one byte a second) keeps the deadline: the server's drain
// of the rest is bounded by it too. A request without a body lifts it at
// once (a long GET stream).
func bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody {
			_ = rc.SetReadDeadline(time.Time{})
		} else {
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body has been read to its
// end.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

// Read reads the body; at its end the deadline is lifted.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.lift)
	}
	return n, err
}

// clientLimit is a listener that holds at most max connections from one
// client address at a time; one more is closed as soon as it is accepted.
type clientLimit struct {
	net.Listener
	max     int
	refused func(addr string)

	mu   sync.Mutex
	open map[string]int
}

func limitPerClient(ln net.Listener, max int, refused func(string)) net.Listener {
	return &clientLimit{Listener: ln, max: max, refused: refused, open: map[string]int{}}
}

// Accept returns the next connection whose client is under the limit.
func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := clientHost(c.RemoteAddr())
		l.mu.Lock()
		over := l.open[host] >= l.max
		if !over {
			l.open[host]++
		}
		l.mu.Unlock()
		if over {
			c.Close()
			l.refused(host)
			continue
		}
		return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *clientLimit) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

// clientHost is the address a connection comes from, without the port.
func clientHost(a net.Addr) string {
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// countedConn gives its place back once closed.
type countedConn struct {
	net.Conn
	release func()
	once    sync.Once
}

// Close closes the connection and frees its place.
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
