package tourtest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestDuplicatesPairsHeaderWithHonourKeys(t *testing.T) {
	claiming := Config{Where: "claims.yaml", Text: readFile(t, "testdata/claims-header.yaml")}
	honest := Config{Where: "no-header.yaml", Text: readFile(t, "testdata/no-header.yaml")}
	cases := []struct {
		name     string
		cfg      Config
		sim      string
		problems int
	}{
		{"header, sim without --honour-keys", claiming, "toolgate sim payments --listen 127.0.0.1:9001 --slow 9s,7s,2.7s", 1},
		{"header, sim with --honour-keys", claiming, "toolgate sim payments --listen 127.0.0.1:9001 --honour-keys --slow 9s", 0},
		{"header, sim on the default port", claiming, "toolgate sim payments --slow 9s", 1},
		{"header, sim of another dependency", claiming, "toolgate sim payments --listen 127.0.0.1:9002", 0},
		{"header, --honour-keys=false", claiming, "toolgate sim payments --listen 127.0.0.1:9001 --honour-keys=false", 1},
		{"no header, sim without --honour-keys", honest, "toolgate sim payments --listen 127.0.0.1:9001", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems, err := Duplicates(c.cfg, SimCommands("page.md", "Run `"+c.sim+"` first."))
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != c.problems {
				t.Fatalf("want %d problems, got %q", c.problems, problems)
			}
		})
	}
}

// document is a page or an example file: its configs and the sim
// commands documented with them.
type document struct {
	configs []Config
	sims    []SimCommand
}

// documents are the README, the pages of docs/ and the configs of
// examples/. An example's sim commands are those of the file itself and of
// every page or example file that names its path.
func documents(t *testing.T) []document {
	var pages []string
	pages = append(pages, filepath.Join(root, "README.md"))
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, more...)
	var exampleFiles, exampleConfigs []string
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		exampleFiles = append(exampleFiles, path)
		if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
			exampleConfigs = append(exampleConfigs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var docs []document
	for _, p := range pages {
		text := readFile(t, p)
		var d document
		for _, b := range Blocks(text) {
			if b.Lang == "yaml" || b.Lang == "yml" {
				d.configs = append(d.configs, Config{Where: fmt.Sprintf("%s:%d", rel(p), b.Line), Text: b.Text})
			}
		}
		d.sims = SimCommands(rel(p), text)
		docs = append(docs, d)
	}
	for _, c := range exampleConfigs {
		d := document{configs: []Config{{Where: rel(c), Text: readFile(t, c)}}}
		for _, other := range append(append([]string{}, pages...), exampleFiles...) {
			text := readFile(t, other)
			if other == c || strings.Contains(text, rel(c)) {
				d.sims = append(d.sims, SimCommands(rel(other), text)...)
			}
		}
		docs = append(docs, d)
	}
	return docs
}

func rel(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// No documented set-up makes a duplicate: every config of the README,
// docs/ and examples/ that says a provider honours the operation key is
// documented with a simulator that honours it.
func TestNoDocumentedSetUpMakesADuplicate(t *testing.T) {
	pairs := 0
	for _, d := range documents(t) {
		for _, c := range d.configs {
			problems, err := Duplicates(c, d.sims)
			if err != nil {
				continue // a part of a config that is not YAML on its own
			}
			for _, p := range problems {
				t.Error(p)
			}
			if ports, _ := claims(c); len(ports) > 0 && len(d.sims) > 0 {
				pairs++
			}
		}
	}
	if pairs == 0 {
		t.Fatal("found no config with idempotency.header documented with a toolgate sim command: the audit reads nothing (the tour's config is one)")
	}
	t.Logf("%d configs with idempotency.header were paired with the toolgate sim commands documented with them", pairs)
}

var placeholder = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// Every full config of the README, docs/ and examples/ passes the real
// `toolgate check` (offline for one that imports from MCP servers or
// OpenAPI documents: their servers are not running here).
func TestEveryFullConfigPassesCheck(t *testing.T) {
	dir := t.TempDir()
	checked := 0
	for _, d := range documents(t) {
		for i, c := range d.configs {
			if !FullConfig(c.Text) {
				continue
			}
			path := filepath.Join(root, c.Where)
			if strings.Contains(c.Where, ":") {
				path = filepath.Join(dir, fmt.Sprintf("block-%d-%d.yaml", checked, i))
				if err := os.WriteFile(path, []byte(c.Text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"check", "--config", path}
			if strings.Contains(c.Text, "mcp:") || strings.Contains(c.Text, "openapi:") {
				args = append(args, "--offline")
			}
			cmd := exec.Command(binary, args...)
			cmd.Env = os.Environ()
			for _, m := range placeholder.FindAllStringSubmatch(c.Text, -1) {
				cmd.Env = append(cmd.Env, m[1]+"=an-example-secret-0123456789")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s: toolgate %s: %v\n%s", c.Where, strings.Join(args[:1], " "), err, out)
			}
			checked++
		}
	}
	t.Logf("ran toolgate check on %d full configs", checked)
	if checked < 3 {
		t.Fatalf("checked %d full configs; want the tour's, the examples' and docs/config.md's at least", checked)
	}
}
