package main

import (
	"bytes"
	"context"
	"errors"
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

// faultStore refuses --disk-full with PostgreSQL (closing the proxy it
// opened first) and a store that is neither sqlite nor a postgres URL; plain
// sqlite is the server's own file, with no fault of its own.
func TestFaultStore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       faultsFlags
		usage   bool
		wantExt int
	}{
		{"sqlite", faultsFlags{store: "sqlite"}, false, 0},
		{"disk full on postgres", faultsFlags{store: "postgres://127.0.0.1:1/toolgate", diskFull: true}, true, 0},
		{"postgres", faultsFlags{store: "postgres://127.0.0.1:1/toolgate"}, false, 3},
		{"not a store", faultsFlags{store: "mysql://127.0.0.1/toolgate"}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, extra, closeStore, err := faultStore(tc.f, t.TempDir())
			if tc.usage {
				if !errors.Is(err, errUsage) || closeStore != nil {
					t.Fatalf("err %v (close %v), want a usage error", err, closeStore != nil)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore()
			if len(extra) != tc.wantExt || (tc.f.store == "sqlite") != (store == "") {
				t.Errorf("store %q, %d faults; want %d", store, len(extra), tc.wantExt)
			}
		})
	}
}
