package soak_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
	"github.com/toolgate/toolgate/bench/soak"
)

// TestSoak is the short fault-injection soak of `make test`: 800 write
// calls of 200 operations from 32 callers, through the real `toolgate
// serve` binary (built with -race when the test is) on a SQLite file,
// against a provider that is slow past the read timeout on 30% of
// requests, answers 503 on 5% and resets 2%. It fails on any duplicate
// effect, any answered call without its execution row, any operation
// whose effect happened left unsettled after the final pass, and every
// other check of package soak (see Report.Failures). It asserts counts,
// never speeds. The same calls through a textbook retry loop are printed
// beside it.
//
// TOOLGATE_SOAK_CALLS=10000 runs the full soak; TOOLGATE_SOAK_SEED=N
// repeats a run's random choices (timing still varies).
func TestSoak(t *testing.T) {
	calls := envInt(t, "TOOLGATE_SOAK_CALLS", 800)
	seed := uint64(envInt(t, "TOOLGATE_SOAK_SEED", int(time.Now().UnixNano()%1_000_000)+1))
	t.Logf("soak seed %d (TOOLGATE_SOAK_SEED=%d repeats its choices)", seed, seed)

	bin, err := serveproc.Build(t.Context(), t.TempDir(), raceEnabled)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := soak.Run(t.Context(), soak.Options{
		Binary: bin, Dir: t.TempDir(), Calls: calls, Callers: 32, Runs: 16, Seed: seed, Textbook: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.Print(os.Stdout)
	if !rep.OK() {
		for _, f := range rep.Failures {
			t.Error(f)
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}
