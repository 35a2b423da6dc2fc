// Package gotests is a fixture of docs' TestCheckGoTestReadsThePackage:
// the tests, benchmarks and flags a documented go test command may name.
package gotests

import (
	"flag"
	"testing"
)

var _ = flag.Bool("screenshots", false, "a flag of this package's own")

func TestPostgresBlackhole(t *testing.T) {}

func TestDependencyFaults(t *testing.T) {}

func BenchmarkCallSequence(b *testing.B) {}
