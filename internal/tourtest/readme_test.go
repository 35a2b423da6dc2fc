package tourtest

import (
	"path/filepath"
	"strings"
	"testing"
)

// The README is read in five minutes: under 300 lines, and its first
// screen says what toolgate is and why (the refund paid three times).
func TestTheREADMEIsShortAndSaysWhatToolgateIs(t *testing.T) {
	lines := strings.Split(readFile(t, filepath.Join(root, "README.md")), "\n")
	if n := len(lines); n >= 300 {
		t.Errorf("README.md has %d lines; keep it under 300 and move detail to docs/", n)
	}
	screen := strings.Join(lines[:min(len(lines), 24)], "\n")
	for _, want := range []string{"refunded three times", "toolgate sits between an LLM agent and the tools it calls"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the README's first screen (24 lines) lacks %q", want)
		}
	}
	for _, want := range []string{"go run ./cmd/toolgate demo", "make test"} {
		if !strings.Contains(strings.Join(lines[:min(len(lines), 40)], "\n"), want) {
			t.Errorf("the README's first 40 lines lack the set-up command %q", want)
		}
	}
}
