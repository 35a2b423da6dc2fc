package toolsource_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
	"github.com/toolgate/toolgate/types"
)

// TestGitHubReposGetEndToEnd: every operation of GitHub's REST API
// description is imported into a gateway (each input schema compiles),
// and repos/get, called as repos_get, reaches a fake GitHub on 127.0.0.1
// as GET /repos/{owner}/{repo} with the dependency's token, and its answer
// is the call's data.
func TestGitHubReposGetEndToEnd(t *testing.T) {
	document := npmfixture.Path(t, "@octokit/openapi", "generated/api.github.com.json")
	answer := reposGetExample(t, document)
	var mu sync.Mutex
	var got []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.RequestURI+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != "/repos/octo-org/hello.world" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"Not Found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer fake.Close()
	cfg := &config.Config{Store: "memory", Dependencies: map[string]*config.Dependency{
		"github": {BaseURL: fake.URL, OpenAPI: document, Headers: map[string]string{"Authorization": "Bearer gh-token"},
			Import: &config.Import{Operations: []string{"*"}}},
	}}
	gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if n := len(gw.Config().Tools); n < 900 {
		t.Fatalf("%d tools imported", n)
	}
	run, err := gw.StartRun(t.Context(), toolgate.RunOptions{Principal: types.Principal{ID: "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := gw.Call(t.Context(), run.ID, "repos_get", map[string]any{"owner": "octo-org", "repo": "hello.world"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("repos_get: %s: %s", res.Code(), res.Observation)
	}
	var data struct {
		FullName string `json:"full_name"`
		Stars    int    `json:"stargazers_count"`
	}
	if err := json.Unmarshal(res.Data, &data); err != nil || data.FullName != "octocat/Hello-World" || data.Stars != 80 {
		t.Errorf("data %s (%v)", res.Data, err)
	}
	mu.Lock()
	if len(got) != 1 || got[0] != "GET /repos/octo-org/hello.world Bearer gh-token" {
		t.Errorf("the fake saw %q", got)
	}
	mu.Unlock()

	res, _ = gw.Call(t.Context(), run.ID, "repos_get", map[string]any{"owner": "octo-org"})
	if res.Code() != types.CodeMissingArguments {
		t.Errorf("repo missing: %s, want missing_arguments", res.Code())
	}
}

// reposGetExample is the document's own example answer of repos/get: an
// answer that matches the output schema imported from the same document
// (toolgate refuses one that does not, invalid_output).
func reposGetExample(t *testing.T, document string) []byte {
	t.Helper()
	raw, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ex := doc.Components.Examples["full-repository-default-response"].Value
	if len(ex) == 0 {
		t.Fatal("the document has no full-repository-default-response example")
	}
	return ex
}
