// Package docs holds the user documentation; its tests fail when a config
// key, an error code or an HTTP route is added without its documentation
// here, when a link of the README or of these pages leaves the
// repository, and when a command or a config they print no longer runs
// as printed.
package docs

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/docgen"
	"github.com/toolgate/toolgate/validate"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every yaml key reachable from config.Config has a doc comment, and the
// key table of docs/config.md is the one those comments generate.
func TestConfigKeysDocumented(t *testing.T) {
	keys, problems, err := docgen.ConfigKeys("../config")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p.Error())
	}
	doc := read(t, "config.md")
	want, err := docgen.Splice(doc, docgen.RenderKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	if want == doc {
		return
	}
	missing := 0
	for _, k := range keys {
		if !strings.Contains(doc, "| `"+k.Path+"` |") {
			missing++
			t.Errorf("config key %s (field %s in %s) is not in docs/config.md: run `go generate ./config`, and add the key to the complete example there", k.Path, k.Field, k.File)
		}
	}
	if missing == 0 {
		t.Error("docs/config.md's key table is stale (a doc comment in config/ changed, or a key went away): run `go generate ./config`")
	}
}

// fullExample is the YAML block after the "full example" marker.
func fullExample(t *testing.T) string {
	t.Helper()
	doc := read(t, "config.md")
	_, after, ok := strings.Cut(doc, "<!-- full example: every key -->\n```yaml\n")
	if !ok {
		t.Fatal("docs/config.md lacks the complete example (a ```yaml block after <!-- full example: every key -->)")
	}
	block, _, _ := strings.Cut(after, "```")
	return block
}

// The complete example of docs/config.md is a valid config that uses every
// key.
func TestFullExampleCoversEveryKey(t *testing.T) {
	block := fullExample(t)
	cfg, err := config.Parse([]byte(block), "docs/config.md", func(string) (string, bool) { return "an-example-secret-0123456789", true })
	if err != nil {
		t.Fatalf("the complete example of docs/config.md does not load:\n%v", err)
	}
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := validate.Compile(cfg, env); err != nil {
		t.Fatalf("the complete example of docs/config.md does not compile:\n%v", err)
	}
	var tree any
	if err := yaml.Unmarshal([]byte(block), &tree); err != nil {
		t.Fatal(err)
	}
	var paths []string
	collectPaths(tree, "", &paths)
	keys, _, err := docgen.ConfigKeys("../config")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		re := keyPattern(k.Path)
		found := false
		for _, p := range paths {
			if re.MatchString(p) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("config key %s (field %s in %s) is not used in the complete example of docs/config.md: add it there", k.Path, k.Field, k.File)
		}
	}
}

// collectPaths lists every key path of a decoded YAML tree: a.b, a[0].c.
func collectPaths(v any, prefix string, out *[]string) {
	switch n := v.(type) {
	case map[string]any:
		for k, child := range n {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			*out = append(*out, p)
			collectPaths(child, p, out)
		}
	case []any:
		for i, child := range n {
			collectPaths(child, prefix+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// keyPattern matches the concrete paths of a key path: <name> is any one
// key, [] any index.
func keyPattern(path string) *regexp.Regexp {
	q := regexp.QuoteMeta(path)
	q = strings.ReplaceAll(q, "<name>", `[^.\[]+`)
	q = strings.ReplaceAll(q, `\[\]`, `\[[0-9]+\]`)
	return regexp.MustCompile("^" + q + "$")
}
