package server

import (
	"net"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/types"
)

// loopbackHost reports whether a request's Host names this machine's
// loopback: localhost (or a name under .localhost, which browsers keep on
// loopback) or a loopback address, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseForeignHost answers 403 and reports true for a request whose Host
// is not a loopback one while the server runs without keys: a page on
// another origin that rebinds its DNS name to 127.0.0.1 reaches the port,
// but its requests carry its own name.
func (s *Server) refuseForeignHost(w http.ResponseWriter, r *http.Request) bool {
	if !s.devMode() || loopbackHost(r.Host) {
		return false
	}
	s.writeError(w, r, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
		message: "without auth.keys this server answers only requests to a loopback host (localhost, 127.0.0.1, [::1]); got Host " + clip(r.Host)})
	return true
}
