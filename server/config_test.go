package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/types"
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

// A tool call gets a write deadline of its own tool's bound plus
// WriteMargin, even past the server's WriteTimeout (which a reload that
// makes a tool slower cannot change): with a WriteTimeout already past when
// the handler writes, a call is still answered while another route is cut.
func TestCallOutlivesTheServersWriteTimeout(t *testing.T) {
	b := setup(t, setupOpts{options: func(o *Options) { o.WriteTimeout = time.Nanosecond }})
	base, cancel, served := b.listen(t)
	defer func() {
		cancel()
		<-served
	}()
	id := b.startRun(alphaKey, `{"principal":{"id":"a"}}`)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	send := func(method, path, body string) (*http.Response, error) {
		r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+alphaKey)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		return client.Do(r)
	}
	resp, err := send("POST", "/v1/runs/"+id+"/calls", `{"tool":"echo","args":{"n":1}}`)
	if err != nil {
		t.Fatalf("the call was cut by the server's write timeout: %v", err)
	}
	var res types.Result
	err = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if err != nil || !res.OK {
		t.Fatalf("call: %v %+v", err, res)
	}
	if resp, err := send("GET", "/v1/runs/"+id, ""); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("GET /v1/runs answered past a write timeout of 1ns: the test proves nothing")
		}
	}
}
