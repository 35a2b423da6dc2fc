package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/config"
)

// keyring holds the configured bearer keys as SHA-256 digests, so that a
// comparison in constant time leaks neither a key's bytes nor its length.
type keyring []namedKey

type namedKey struct {
	key    config.Key
	digest [sha256.Size]byte
}

func newKeyring(keys []config.Key) keyring {
	kr := make(keyring, 0, len(keys))
	for _, k := range keys {
		if k.Key == "" {
			continue // matches nothing (toolgate check reports it)
		}
		kr = append(kr, namedKey{key: k, digest: sha256.Sum256([]byte(k.Key))})
	}
	return kr
}

// match returns the entry whose key equals given, comparing against every
// key so that the time taken does not say which one matched.
func (kr keyring) match(given string) (config.Key, bool) {
	d := sha256.Sum256([]byte(given))
	var found config.Key
	ok := 0
	for _, k := range kr {
		eq := subtle.ConstantTimeCompare(d[:], k.digest[:])
		if eq == 1 && ok == 0 {
			found = k.key
		}
		ok |= eq
	}
	return found, ok == 1
}

// verify is the SDK's token verifier: the token's UserID is the key's name,
// which binds an HTTP session to the key that opened it.
func (kr keyring) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	k, ok := kr.match(token)
	if !ok {
		return nil, fmt.Errorf("%w: the bearer key is not one of this server's keys", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: k.Name}, nil
}

// byName returns the entry with the name.
func (kr keyring) byName(name string) (config.Key, bool) {
	for _, k := range kr {
		if k.key.Name == name {
			return k.key, true
		}
	}
	return config.Key{}, false
}
