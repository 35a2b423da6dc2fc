package server

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// How a refused key is logged (docs/dashboard.md, "Without a key"):
//
//   - a request that sent no key at all (a browser tab, a probe, a client
//     not yet configured) is logged at DEBUG: there is nothing to act on,
//     and a tab left open would otherwise log a line per poll;
//   - a request with a wrong key is logged at WARN the first time from its
//     client address, then at DEBUG for the next refusalQuiet; the next WARN
//     from it after that says how many were refused unlogged meanwhile.
const (
	refusalQuiet = 10 * time.Minute
	// maxRefusalClients bounds the addresses remembered; past it the
	// memory is cleared (a client then gets one WARN more).
	maxRefusalClients = 4096
)

// refusalLog remembers, per client address, when a wrong key was last
// logged at WARN and how many were refused since. The zero value is ready.
type refusalLog struct {
	mu      sync.Mutex
	clients map[string]*refusals
}

type refusals struct {
	warned  time.Time
	quieted int
}

// level is the log level of a 401 for r at now, and how many refusals of
// the same client went unlogged at WARN before it (reported on a WARN).
func (l *refusalLog) level(r *http.Request, now time.Time) (slog.Level, int) {
	if r.Header.Get("Authorization") == "" {
		return slog.LevelDebug, 0
	}
	host := requestHost(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil || len(l.clients) >= maxRefusalClients {
		l.clients = map[string]*refusals{}
	}
	c := l.clients[host]
	if c == nil {
		l.clients[host] = &refusals{warned: now}
		return slog.LevelWarn, 0
	}
	if now.Sub(c.warned) < refusalQuiet {
		c.quieted++
		return slog.LevelDebug, 0
	}
	quieted := c.quieted
	c.warned, c.quieted = now, 0
	return slog.LevelWarn, quieted
}

// requestHost is the address a request came from, without its port.
func requestHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
