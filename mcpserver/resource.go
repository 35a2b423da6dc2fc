package mcpserver

import (
	"encoding/json"
	"net/http"
	"strings"
)

// ResourceMetadataPath is where the OAuth 2.0 Protected Resource Metadata
// (RFC 9728) of the MCP endpoint is served: the well-known prefix followed
// by the endpoint's path (/.well-known/oauth-protected-resource/mcp), and
// the prefix alone, which clients also try.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the protected-resource metadata of an MCP endpoint
// guarded by toolgate's bearer keys: the keys go in the Authorization
// header, and there is no authorization server, since toolgate's keys are
// configured (auth.keys), not issued by OAuth. A client that reads it
// learns that it cannot obtain a token by an OAuth flow and must be given
// a key.
type ResourceMetadata struct {
	// Resource is the MCP endpoint's absolute URL.
	Resource string `json:"resource"`
	// AuthorizationServers is empty: no OAuth server issues the keys.
	AuthorizationServers []string `json:"authorization_servers"`
	// BearerMethodsSupported is ["header"]: Authorization: Bearer KEY.
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// ResourceName is "toolgate".
	ResourceName string `json:"resource_name"`
	// Description is toolgate's own member (RFC 9728 allows more): how to
	// authenticate, in words.
	Description string `json:"toolgate_auth"`
}

// ResourceMetadataHandler serves the metadata of the MCP endpoint at
// endpointPath ("/mcp") under publicURL (the config's public_url), or, when
// that is "", of the server the request reached (its Host header). It is
// public: the metadata is what a client reads before it has a key.
func ResourceMetadataHandler(publicURL, endpointPath string) http.Handler {
	publicURL = strings.TrimSuffix(publicURL, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := publicURL
		if base == "" {
			base = origin(r)
		}
		md := ResourceMetadata{
			Resource:               base + endpointPath,
			AuthorizationServers:   []string{},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "toolgate",
			Description:            "Send a key from the server's auth.keys as Authorization: Bearer <key>. toolgate runs no OAuth authorization server: configure the key in the client instead of signing in.",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "max-age=3600")
		_ = json.NewEncoder(w).Encode(md)
	})
}

// origin is scheme://host of the server as the request reached it.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + strings.TrimSuffix(r.Host, "/")
}
