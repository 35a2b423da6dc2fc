package archtest

import (
	"strings"
	"testing"
)

// TestInternalHoldsLeaves fails on every package under internal/ whose
// non-test files import a package of the module outside internal/: internal/
// holds leaves (the clock, JSON text, the simulator, test fixtures, ...)
// that anything may import, so an import back up into the module would tie
// the bottom of the house to its upper floors. A package that needs the
// module belongs beside what it serves (cmd/toolgate/internal/demo,
// store/storeurl, bench/faultcheck). Its test files may import more: they
// are not part of what an importer pulls in.
func TestInternalHoldsLeaves(t *testing.T) {
	g := &graph{imports: map[string][]string{}}
	pkgs, err := g.expand("internal/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no package found under internal/")
	}
	for _, pkg := range pkgs {
		imps, err := g.direct(pkg)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range imps {
			if !strings.HasPrefix(imp, "internal/") {
				t.Errorf("%s imports %s: a package under internal/ imports only other internal/ leaves; move it beside what it serves", pkg, imp)
			}
		}
	}
}
