package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/mcpserver"
)

// The protected-resource metadata names the endpoint under the config's
// public_url whatever Host the request carries; without public_url, under
// the Host.
func TestResourceMetadataFromPublicURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		publicURL, host, want string
	}{
		{"https://tools.example.com/", "evil.example", "https://tools.example.com/mcp"},
		{"https://tools.example.com/gw", "127.0.0.1:8470", "https://tools.example.com/gw/mcp"},
		{"", "127.0.0.1:8470", "http://127.0.0.1:8470/mcp"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, mcpserver.ResourceMetadataPath+"/mcp", nil)
		req.Host = tt.host
		rec := httptest.NewRecorder()
		mcpserver.ResourceMetadataHandler(tt.publicURL, "/mcp").ServeHTTP(rec, req)
		var md mcpserver.ResourceMetadata
		if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil {
			t.Fatal(err)
		}
		if md.Resource != tt.want {
			t.Errorf("public_url %q, Host %q: resource %q, want %q", tt.publicURL, tt.host, md.Resource, tt.want)
		}
	}
}
