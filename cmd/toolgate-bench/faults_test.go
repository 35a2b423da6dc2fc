package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
	"github.com/toolgate/toolgate/internal/testsupport/testbin"
)

// TestFaultsShortRun runs toolgate-bench faults (with --disk-full as root)
// for 10 s on the real
// binary (race-enabled when the test is): the seed comes first, then the
// faults, then the figures, and no promise may be broken.
func TestFaultsShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s fault run on the real binary")
	}
	bin, err := serveproc.Build(context.Background(), t.TempDir(), testbin.Race)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// As root, the SQLite file sits on a tmpfs that the run fills too.
	err = faultsRun(context.Background(), faultsFlags{seed: 42, duration: 10 * time.Second, callers: 4, store: "sqlite", binary: bin,
		diskFull: os.Geteuid() == 0}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.HasPrefix(text, "seed 42 ") {
		t.Errorf("the output does not begin with the seed:\n%s", text)
	}
	for _, want := range []string{"fault 1: dependency ", "duplicates:               0", "lost rows:                0",
		"unsettled after reconcile: 0", "violations:               0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}

// The section of BENCHMARKS.md shows the promises' counts, and says
// whether every check passed.
func TestWriteFaults(t *testing.T) {
	f := &faultsFigures{Command: "go run ./cmd/toolgate-bench faults --seed 1 --duration 30m --record", Seed: 1, Seconds: 1800,
		Faults: 300, ByKind: map[string]int{"dependency reset": 300}, Calls: 1000, Answered: 1000, Codes: map[string]int{"ok": 1000},
		WorstRecoveryMS: 1200}
	var b strings.Builder
	writeFaults(&b, f)
	for _, want := range []string{"## Fault run", "| - dependency reset | 300 |", "| **duplicates** | **0** |", "| worst recovery after a fault's end (limit 5 s) | 1200 ms |", "Every check passed."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the section lacks %q:\n%s", want, b.String())
		}
	}
	f.Duplicates, f.Violations = 1, 1
	b.Reset()
	writeFaults(&b, f)
	if strings.Contains(b.String(), "Every check passed.") || !strings.Contains(b.String(), "**1 promise(s) broken**") {
		t.Errorf("a broken run reads as passed:\n%s", b.String())
	}
}
