package openapi

import (
	"runtime"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/npmfixture"
)

// githubDescription is GitHub's REST API description from the npm package
// @octokit/openapi (scripts/install-mcp-servers.sh).
func githubDescription(tb testing.TB) string {
	tb.Helper()
	return npmfixture.Path(tb, "@octokit/openapi", "generated/api.github.com.json")
}

// TestGitHubDescription: a large document nobody here wrote imports whole:
// every operation is a tool or skipped with a reason, "*" selects every
// tool (operationIds such as repos/get hold a /), and repos/get is the
// tool repos_get with its two path parameters.
func TestGitHubDescription(t *testing.T) {
	path := githubDescription(t)
	cfg := &config.Config{Store: "memory", Dependencies: map[string]*config.Dependency{
		"github": {BaseURL: "http://127.0.0.1:1", OpenAPI: path, Import: &config.Import{Operations: []string{"*"}}},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	lists, reports, err := ImportAll(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	if r.Operations < 900 || r.Tools+len(r.Skipped) != r.Operations || r.Imported != r.Tools {
		t.Fatalf("report: %d operations, %d tools, %d imported, %d skipped", r.Operations, r.Tools, r.Imported, len(r.Skipped))
	}
	for _, s := range r.Skipped {
		if s.Operation == "" || s.Why == "" {
			t.Errorf("skipped without a name or reason: %+v", s)
		}
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Tools) != r.Tools {
		t.Errorf("%d tools merged, want %d", len(merged.Tools), r.Tools)
	}
	get := merged.Tools["repos_get"]
	if get == nil || get.Source.Name != "repos/get" || get.Effect != "read" || get.Request.Path != "/repos/{owner}/{repo}" ||
		get.Request.Params["owner"].In != config.InPath || get.Request.Params["repo"].In != config.InPath {
		t.Fatalf("repos_get: %+v", get)
	}
	t.Logf("GitHub: %d operations, %d tools, %d skipped", r.Operations, r.Tools, len(r.Skipped))
}

// BenchmarkGitHubImport reads and converts GitHub's description: ns/op is
// the import's time, B/op what it allocates, and live-MB the heap the
// imported tools keep once the document is dropped.
func BenchmarkGitHubImport(b *testing.B) {
	path := githubDescription(b)
	d := &config.Dependency{Name: "github", OpenAPI: path, Import: &config.Import{}}
	b.ReportAllocs()
	var doc *Document
	for b.Loop() {
		var err error
		if doc, err = Load(b.Context(), d, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
	b.ReportMetric(float64(len(doc.Tools)), "tools")
	runtime.KeepAlive(doc)
}
