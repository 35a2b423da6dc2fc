package archtest

import (
	"go/build"
	"slices"
	"testing"
)

// rootFiles are the only non-test files the root package may have: the
// Gateway (its type, Open and its methods, each a delegation to the
// package that does the work), its options and public names, and the
// package story. Tool sources, the reload controller and the stages each
// live in a package of their own.
var rootFiles = []string{"doc.go", "options.go", "toolgate.go"}

// TestThinRoot fails on a non-test file at the root other than rootFiles.
func TestThinRoot(t *testing.T) {
	p, err := build.ImportDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := append(append([]string{}, p.GoFiles...), p.IgnoredGoFiles...)
	for _, f := range files {
		if !slices.Contains(rootFiles, f) {
			t.Errorf("the root package has %s: the root holds only the Gateway (%v); move the code to the package that does its job", f, rootFiles)
		}
	}
}
