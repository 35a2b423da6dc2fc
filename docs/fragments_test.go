package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/toolgate/toolgate/internal/tourtest"
)

// fragmentHomes are where a fragment goes whose top-level key is not one
// of the config's: the key it documents ("rules:" are a tool's, and the
// pages show them for issue_refund).
var fragmentHomes = map[string][]string{
	"rules": {"tools", "issue_refund"},
}

// mergeFragment lays a fragment over a config: a mapping merges key by
// key, anything else (a list, a scalar) replaces what the config had.
func mergeFragment(base, fragment map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range fragment {
		bm, bok := out[k].(map[string]any)
		fm, fok := v.(map[string]any)
		if bok && fok {
			out[k] = mergeFragment(bm, fm)
			continue
		}
		out[k] = v
	}
	return out
}

// placeFragment nests a fragment at its home when its top-level keys are
// not the config's (the keys of the complete example, which uses every
// key).
func placeFragment(base, fragment map[string]any) (map[string]any, error) {
	placed := map[string]any{}
	for k, v := range fragment {
		if _, top := base[k]; top {
			placed[k] = v
			continue
		}
		home, ok := fragmentHomes[k]
		if !ok {
			return nil, fmt.Errorf("%q is not a top-level key of the config, and fragmentHomes does not say where it goes", k)
		}
		nested := map[string]any{k: v}
		for i := len(home) - 1; i >= 0; i-- {
			nested = map[string]any{home[i]: nested}
		}
		placed = mergeFragment(placed, nested)
	}
	return placed, nil
}

// placeholder finds the ${VAR} a config reads from the environment.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// withoutImports is a config without its dependencies that import (MCP
// servers, OpenAPI documents), the tools that override what they import,
// and the keys' lists of imported resources and prompts: toolgate check
// compiles every rule and expression of such a config offline, while it
// checks only the file's structure while imports are pending.
func withoutImports(cfg map[string]any) map[string]any {
	out := mergeFragment(cfg, nil)
	deps, _ := cfg["dependencies"].(map[string]any)
	kept := map[string]any{}
	for name, d := range deps {
		dep, _ := d.(map[string]any)
		if _, mcp := dep["mcp"]; mcp {
			continue
		}
		if _, openapi := dep["openapi"]; openapi {
			continue
		}
		kept[name] = d
	}
	out["dependencies"] = kept
	tools, _ := cfg["tools"].(map[string]any)
	declared := map[string]any{}
	for name, v := range tools {
		tool, _ := v.(map[string]any)
		if dep, _ := tool["dependency"].(string); kept[dep] != nil {
			declared[name] = v
		}
	}
	out["tools"] = declared
	if auth, ok := cfg["auth"].(map[string]any); ok {
		keys, _ := auth["keys"].([]any)
		var stripped []any
		for _, k := range keys {
			key := mergeFragment(k.(map[string]any), nil)
			delete(key, "resources")
			delete(key, "prompts")
			stripped = append(stripped, key)
		}
		out["auth"] = mergeFragment(auth, map[string]any{"keys": stripped})
	}
	return out
}

// Every YAML block of the README and docs/ that is a part of a config
// (internal/tourtest runs toolgate check on the whole ones) is valid
// where it goes: laid over the complete example of docs/config.md
// without its imports, and over the blocks above it on its page (a page
// builds its config up), the config passes the real `toolgate check`:
// every key known, every value, rule and expression valid. A page whose
// blocks import from an MCP server or an OpenAPI document is checked
// with --offline, which judges the file's structure alone (the servers
// are not running here).
func TestEveryConfigFragmentPassesCheck(t *testing.T) {
	var full map[string]any
	if err := yaml.Unmarshal([]byte(fullExample(t)), &full); err != nil {
		t.Fatal(err)
	}
	base := withoutImports(full)
	dir := t.TempDir()
	checked := 0
	for _, page := range commandPages(t) {
		name := pageName(page)
		cfg := base
		for _, b := range tourtest.Blocks(read(t, page)) {
			if (b.Lang != "yaml" && b.Lang != "yml") || tourtest.FullConfig(b.Text) || strings.HasPrefix(b.Marker, "tour excerpt:") {
				continue
			}
			where := fmt.Sprintf("%s:%d", name, b.Line)
			var fragment map[string]any
			if err := yaml.Unmarshal([]byte(b.Text), &fragment); err != nil {
				t.Errorf("%s: the block is not a YAML mapping: %v", where, err)
				continue
			}
			placed, err := placeFragment(full, fragment)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			cfg = mergeFragment(cfg, placed)
			merged, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("fragment-%d.yaml", checked))
			if err := os.WriteFile(path, merged, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"check", "--config", path}
			if imports := withoutImports(cfg); len(imports["dependencies"].(map[string]any)) < len(cfg["dependencies"].(map[string]any)) {
				args = append(args, "--offline")
			}
			how := "toolgate " + strings.Join(append(args[:1:1], args[3:]...), " ")
			cmd := exec.Command(binary, args...)
			cmd.Dir = dir
			cmd.Env = os.Environ()
			for _, m := range placeholder.FindAllStringSubmatch(string(merged), -1) {
				cmd.Env = append(cmd.Env, m[1]+"=an-example-secret-0123456789")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s: the block, laid over the complete example of docs/config.md (and the blocks above it), fails %s: %v\n%s", where, how, err, out)
				continue
			}
			checked++
			t.Logf("%s: %s: %s", where, how, strings.TrimSpace(string(out)))
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d config fragments; the pages show more: the reading of their blocks broke", checked)
	}
}
