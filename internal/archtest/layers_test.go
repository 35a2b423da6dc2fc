package archtest

import (
	"errors"
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	module = "github.com/toolgate/toolgate"
	root   = "../.." // the module's directory, from this package's
)

// rules are the imports that must not come back: no package matching from
// (a package path in the module, "." for the root package, or one ending in
// /... for it and all below it) may depend, directly or through others, on forbidden; or, for a rule
// marked direct, import it itself (the edges reach the pipeline through the
// root package's Gateway, which imports it, but never past it).
var rules = []struct {
	from, forbidden, why string
	direct               bool
}{
	{"monitor/...", "pipeline", "the sinks implement monitor.Sink; the pipeline feeds them", false},
	{"monitor/...", "execute", "the sinks read the breakers' state from package breaker, a policy of its own; execute is one attempt", false},
	{"breaker", "execute", "the breaker is a policy around an attempt; it knows outcomes, not the executor", false},
	{"execute/...", "breaker", "execute runs one attempt and never consults the breaker; the pipeline wraps it around each attempt", false},
	{"execute/...", "retry", "the pipeline turns an execute.Failure into retry's input", false},
	{"retry", "config", "retry owns its settings and defaults; the pipeline converts config into them", false},
	{"breaker", "config", "the breaker owns its settings and defaults; the pipeline converts config into them", false},
	{"server/...", "pipeline", "an edge calls the Gateway (Do, DoRun, Now, Breakers, Reconcile), never the pipeline", true},
	{"mcpserver/...", "pipeline", "an edge calls the Gateway (Do, DoRun, Now, Breakers, Reconcile), never the pipeline", true},
	{"cmd/...", "pipeline", "an edge calls the Gateway (Do, DoRun, Now, Breakers, Reconcile), never the pipeline", true},
	{"dashboard/...", "pipeline", "an edge calls the Gateway (Do, DoRun, Now, Breakers, Reconcile), never the pipeline", true},
	{"toolsource/...", ".", "the Gateway (the root) composes the tool sources, not the reverse", false},
	{"toolsource/...", "pipeline", "the tool sources reach the pipeline only through the functions the Gateway binds", false},
	{"toolsource/...", "server", "the tool sources are below every edge", false},
	{"toolsource/...", "mcpserver", "the tool sources are below every edge", false},
	{"reload", ".", "the Gateway (the root) composes the reload controller, not the reverse", false},
	{"reload", "pipeline", "the reload controller reaches the pipeline only through the functions the Gateway gives it", false},
	{"reload", "toolsource", "the reload controller applies a config through the function the Gateway gives it", false},
}

// TestNoUpwardImports reads the imports of the module's packages from their
// files (go/build, as go list does; reading them here, rather than running
// go list, lets go test's cache see a changed import) and fails on every
// forbidden dependency, with the chain of imports that leads to it.
func TestNoUpwardImports(t *testing.T) {
	g := &graph{imports: map[string][]string{}}
	for _, r := range rules {
		pkgs, err := g.expand(r.from)
		if err != nil {
			t.Fatal(err)
		}
		if len(pkgs) == 0 {
			t.Errorf("rule %s -> %s matched no package: the package moved; fix the rule", r.from, r.forbidden)
		}
		for _, pkg := range pkgs {
			chain, err := g.path(pkg, r.forbidden)
			if r.direct {
				chain, err = g.imported(pkg, r.forbidden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if chain != nil {
				t.Errorf("%s depends on %s (%s): %s", pkg, r.forbidden, strings.Join(chain, " -> "), r.why)
			}
		}
	}
}

// graph is the module's import graph, read as needed. Packages are named by
// their path inside the module ("pipeline", "breaker").
type graph struct {
	imports map[string][]string // the module's packages each imports
}

// direct is the module packages pkg imports (its non-test files).
func (g *graph) direct(pkg string) ([]string, error) {
	if imps, ok := g.imports[pkg]; ok {
		return imps, nil
	}
	p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
	if err != nil {
		return nil, err
	}
	var imps []string
	for _, imp := range p.Imports {
		if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
			imps = append(imps, rel)
		} else if imp == module {
			imps = append(imps, ".")
		}
	}
	g.imports[pkg] = imps
	return imps, nil
}

// imported is the one-link chain pkg -> forbidden when pkg's own files
// import forbidden, else nil.
func (g *graph) imported(pkg, forbidden string) ([]string, error) {
	imps, err := g.direct(pkg)
	if err != nil || !slices.Contains(imps, forbidden) {
		return nil, err
	}
	return []string{pkg, forbidden}, nil
}

// path is the chain of imports from pkg to forbidden, or nil if pkg does
// not depend on it.
func (g *graph) path(pkg, forbidden string) ([]string, error) {
	from := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		imps, err := g.direct(cur)
		if err != nil {
			return nil, err
		}
		for _, imp := range imps {
			if _, ok := from[imp]; ok {
				continue
			}
			from[imp] = cur
			if imp == forbidden {
				chain := []string{imp}
				for at := cur; at != ""; at = from[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain, nil
			}
			queue = append(queue, imp)
		}
	}
	return nil, nil
}

// expand lists the packages a rule's from names: the package itself, or for
// a pattern ending in /... every package in and below the directory.
func (g *graph) expand(pattern string) ([]string, error) {
	base, all := strings.CutSuffix(pattern, "/...")
	if !all {
		return []string{base}, nil
	}
	var pkgs []string
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(base)), func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(dir, 0); err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
		return nil
	})
	return pkgs, err
}
