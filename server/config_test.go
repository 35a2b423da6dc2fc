package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
)

// GET /v1/config names the live version and the reload's outcome, needs a
// key, and carries no secret.
func TestGetConfig(t *testing.T) {
	b := setup(t, setupOpts{})
	if resp := b.get("/v1/config", ""); resp.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", resp.status)
	}
	var info toolgate.ConfigInfo
	b.get("/v1/config", alphaKey).decode(t, &info)
	if info.Version != b.gw.Config().Version || info.Tools != 2 || info.LoadedAt.IsZero() || info.LastReload != nil {
		t.Errorf("config %+v", info)
	}
	next := testConfig(b.entered, b.release)
	next.Tools["echo"].Description = "Answers its arguments (reloaded)."
	if _, err := b.gw.Reload(next); err != nil {
		t.Fatal(err)
	}
	resp := b.get("/v1/config", alphaKey)
	resp.decode(t, &info)
	if info.Version != next.Version || info.LastReload == nil || !info.LastReload.OK {
		t.Errorf("after a reload: %+v", info)
	}
	for _, secret := range []string{alphaKey, betaKey} {
		if strings.Contains(string(resp.body), secret) {
			t.Errorf("GET /v1/config shows a key: %s", resp.body)
		}
	}
}

// GET /v1/openapi.json needs no key and answers the OpenAPI 3.1 document.
func TestGetOpenAPI(t *testing.T) {
	b := setup(t, setupOpts{})
	resp := b.get("/v1/openapi.json", "")
	if resp.status != http.StatusOK {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	resp.decode(t, &doc)
	if doc.OpenAPI != "3.1.0" || doc.Paths["/v1/runs/{run}/calls"] == nil {
		t.Errorf("document: openapi %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}
}
