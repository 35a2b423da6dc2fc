package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// keyring holds the bearer keys as SHA-256 digests: comparing digests of
// equal length in constant time leaks neither a key's bytes nor its length.
type keyring []namedKey

type namedKey struct {
	name     string
	digest   [sha256.Size]byte
	approver bool
}

func newKeyring(keys []config.Key) (keyring, error) {
	kr := make(keyring, 0, len(keys))
	for i, k := range keys {
		if k.Name == "" || k.Key == "" {
			return nil, fmt.Errorf("server: key %d needs a name and a key", i)
		}
		kr = append(kr, namedKey{name: k.Name, digest: sha256.Sum256([]byte(k.Key)), approver: k.Approver})
	}
	return kr, nil
}

// match returns the name of the key that equals given, comparing against
// every key so that the time taken does not say which one matched.
func (kr keyring) match(given string) (string, bool) {
	d := sha256.Sum256([]byte(given))
	name, found := "", 0
	for _, k := range kr {
		eq := subtle.ConstantTimeCompare(d[:], k.digest[:])
		if eq == 1 && found == 0 {
			name = k.name
		}
		found |= eq
	}
	return name, found == 1
}

type keyNameKey struct{}

// KeyName is the name of the API key that authenticated the request whose
// context this is; "" in development mode (no keys) and on public routes.
func KeyName(ctx context.Context) string {
	name, _ := ctx.Value(keyNameKey{}).(string)
	return name
}

// WithKeyName returns ctx carrying a key name, as authentication does
// (for tests of mounted handlers).
func WithKeyName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, keyNameKey{}, name)
}

// authenticated requires a valid bearer key when keys are configured.
// metadata, when set, is the path of the route's protected-resource
// metadata, named in the 401 challenge.
func (s *Server) authenticated(h http.Handler, metadata string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.keys) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		given, err := bearer(r.Header.Get("Authorization"))
		if err != nil {
			w.Header().Set("WWW-Authenticate", challenge(r, metadata, ""))
			s.writeError(w, r, &apiError{status: http.StatusUnauthorized, code: types.CodeUnauthorized, message: err.Error()})
			return
		}
		name, ok := s.keys.match(given)
		if !ok {
			w.Header().Set("WWW-Authenticate", challenge(r, metadata, "invalid_token"))
			s.writeError(w, r, &apiError{status: http.StatusUnauthorized, code: types.CodeUnauthorized,
				message: "the API key in the Authorization header is not one of this server's keys"})
			return
		}
		h.ServeHTTP(w, r.WithContext(WithKeyName(r.Context(), name)))
	})
}

// challenge is the WWW-Authenticate value of a 401: the realm, the OAuth
// error if any, and the absolute URL of the resource metadata if the route
// has one.
func challenge(r *http.Request, metadata, oauthError string) string {
	c := `Bearer realm="toolgate"`
	if oauthError != "" {
		c += `, error="` + oauthError + `"`
	}
	if strings.HasPrefix(metadata, "http://") || strings.HasPrefix(metadata, "https://") {
		c += `, resource_metadata="` + metadata + `"` // under the config's public_url
	} else if metadata != "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		c += `, resource_metadata="` + scheme + "://" + r.Host + metadata + `"`
	}
	return c
}

// bearer extracts the key of an "Authorization: Bearer KEY" header.
func bearer(header string) (string, error) {
	if header == "" {
		return "", errors.New("no API key was sent: send the header Authorization: Bearer <key>")
	}
	scheme, key, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errors.New("the Authorization header must be Bearer <key>")
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("the Authorization header has no key after Bearer")
	}
	return key, nil
}

// devMode reports whether the server runs without keys: every run is
// visible to every caller.
func (s *Server) devMode() bool { return len(s.keys) == 0 }

// approver reports whether the caller of ctx may decide approvals: a key
// marked approver, or anyone in development mode (loopback only).
func (s *Server) approver(ctx context.Context) bool {
	if s.devMode() {
		return true
	}
	name := KeyName(ctx)
	for _, k := range s.keys {
		if k.name == name {
			return k.approver
		}
	}
	return false
}

// owns reports whether the caller of ctx may see a run owned by owner.
func (s *Server) owns(ctx context.Context, owner string) bool {
	return s.devMode() || KeyName(ctx) == owner
}
