package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/mcpserver"
)

// The 401 of /mcp names protected-resource metadata (RFC 9728) that says
// bearer keys go in the header and there is no OAuth authorization server,
// so MCP clients have no OAuth flow to start.
func TestMCPUnauthorizedPointsToResourceMetadata(t *testing.T) {
	path := mcpConfig(t, "")
	found := make(chan string, 1)
	stderr := &prefixWatcher{prefix: "toolgate listening on ", found: found}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, &env{stdout: stderr, stderr: stderr, getenv: os.Getenv}, []string{"serve", "--config", path, "--listen", "127.0.0.1:0"})
	}()
	defer func() { cancel(); <-exit }()
	var base string
	select {
	case base = <-found:
		base = strings.TrimSpace(base)
	case code := <-exit:
		exit <- code
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(challenge)
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		t.Fatalf("POST /mcp without a key: %d, WWW-Authenticate %q; want 401 naming resource_metadata", resp.StatusCode, challenge)
	}
	if want := base + mcpserver.ResourceMetadataPath + "/mcp"; m[1] != want {
		t.Errorf("resource_metadata %q, want %q", m[1], want)
	}
	for _, u := range []string{m[1], base + mcpserver.ResourceMetadataPath} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		servers, _ := md["authorization_servers"].([]any)
		methods, _ := md["bearer_methods_supported"].([]any)
		if md["resource"] != base+"/mcp" || servers == nil || len(servers) != 0 || len(methods) != 1 || methods[0] != "header" {
			t.Errorf("GET %s: %v; want resource %s/mcp, no authorization servers, bearer in the header", u, md, base)
		}
	}
}
