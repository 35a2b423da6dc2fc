package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// openHooked opens a store with the writer's hooks h in a fresh schema of
// the test server (TOOLGATE_TEST_POSTGRES; skipped without it, failed
// without it under CI=true), dropped with the store when t ends.
// (postgrestest imports this package, so this test cannot use it.)
func openHooked(t *testing.T, h writerHooks) *Store {
	t.Helper()
	url := os.Getenv("TOOLGATE_TEST_POSTGRES")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TOOLGATE_TEST_POSTGRES is not set; CI=true, so this is a failure")
		}
		t.Skip("TOOLGATE_TEST_POSTGRES is not set (run under scripts/with-postgres.sh)")
	}
	var random [8]byte
	_, _ = rand.Read(random[:])
	schema := "toolgate_test_" + hex.EncodeToString(random[:])
	s, err := Open(t.Context(), url, Options{Owner: "test", Schema: schema, hooks: h, Liveness: LivenessOptions{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Error(err)
		}
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return s
}

// gate holds the writer's first batch until n requests are queued, so
// that the test knows they are packed into one transaction.
type gate struct {
	n     int64
	seen  atomic.Int64
	ready chan struct{}
	once  sync.Once
}

func newGate(n int) *gate { return &gate{n: int64(n), ready: make(chan struct{})} }

func (g *gate) hooks() writerHooks {
	return writerHooks{
		enqueued: func() {
			if g.seen.Add(1) == g.n {
				close(g.ready)
			}
		},
		taken: func() { g.once.Do(func() { <-g.ready }) },
		conns: 1, // a second writer goroutine would take some of them
	}
}

// TestWriterPacksAndIsolates: N concurrent writes packed into one
// transaction, one of which is refused or fails: the others commit, that
// one gets its own error and writes nothing, and the writer packed all N
// into its first transaction (WriterStats). A conflict that writes nothing
// (a zero-row answer) costs no rollback; a server error, or a refusal
// after a step was taken in the batch, rolls the batch back, sends the
// others again without the failing write, which then runs alone (and is
// rolled back alone).
func TestWriterPacksAndIsolates(t *testing.T) {
	const n = 8
	const odd = 3 // the write that conflicts or fails
	for _, tc := range []struct {
		name string
		// write is the odd write; the others are plain commits.
		write     func(ctx context.Context, s *Store, runID string) error
		want      error // nil: any error, checked by wantIs
		rollbacks uint64
	}{
		{"version conflict", func(ctx context.Context, s *Store, runID string) error {
			return s.Commit(ctx, &store.Commit{Execution: execution(runID), NewState: json.RawMessage(`{"x":1}`), ExpectVersion: 7})
		}, store.ErrVersionConflict, 0},
		{"unknown operation", func(ctx context.Context, s *Store, runID string) error {
			return s.Commit(ctx, &store.Commit{Execution: execution(runID), Operation: &store.OperationUpdate{Key: "missing", Status: types.OpCompleted}})
		}, store.ErrNotFound, 0},
		{"step budget", func(ctx context.Context, s *Store, runID string) error {
			_, _, _, err := s.AdmitAndBegin(ctx, "spent", &types.Operation{Key: "k-spent", ArgsHash: "h", RunID: "spent", Tool: "t"})
			return err
		}, store.ErrStepBudget, 0},
		{"server error", func(ctx context.Context, s *Store, runID string) error {
			e := execution(runID)
			e.Args = json.RawMessage(`{not json`)
			return s.Commit(ctx, &store.Commit{Execution: e})
		}, nil, 2},
		{"conflict after the step was taken", func(ctx context.Context, s *Store, runID string) error {
			return s.Commit(ctx, &store.Commit{Execution: execution(runID), NewState: json.RawMessage(`{"x":1}`), ExpectVersion: 7,
				TakeStep: func(step int64) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"step":%d}`, step)) }})
		}, store.ErrVersionConflict, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(n)
			s := openHooked(t, g.hooks())
			ctx := t.Context()
			if err := s.CreateRun(ctx, &types.Run{ID: "spent", MaxSteps: 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AdmitStep(ctx, "spent"); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if err := s.CreateRun(ctx, &types.Run{ID: runName(i)}); err != nil {
					t.Fatal(err)
				}
			}
			before := s.WriterStats()
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if i == odd {
						errs[i] = tc.write(ctx, s, runName(i))
					} else {
						errs[i] = s.Commit(ctx, &store.Commit{Execution: execution(runName(i))})
					}
				})
			}
			wg.Wait()
			for i, err := range errs {
				switch {
				case i != odd && err != nil:
					t.Errorf("write %d beside the odd one: %v", i, err)
				case i == odd && (err == nil || tc.want != nil && !errors.Is(err, tc.want)):
					t.Errorf("odd write = %v, want %v", err, tc.want)
				}
				run, err := s.GetRun(ctx, runName(i))
				if err != nil {
					t.Fatal(err)
				}
				if want := int64(1); i == odd {
					if run.Version != 0 || run.Step != 0 {
						t.Errorf("odd run at version %d, step %d; want 0, 0 (nothing written)", run.Version, run.Step)
					}
				} else if run.Version != want {
					t.Errorf("run %d at version %d, want %d", i, run.Version, want)
				}
			}
			got := s.WriterStats()
			if reqs := got.Requests - before.Requests; reqs != n {
				t.Errorf("writer ran %d requests, want %d", reqs, n)
			}
			if rollbacks := got.Rollbacks - before.Rollbacks; rollbacks != tc.rollbacks {
				t.Errorf("writer rolled back %d transactions, want %d", rollbacks, tc.rollbacks)
			}
			if batches := got.Batches - before.Batches; batches != 1+tc.rollbacks {
				t.Errorf("writer sent %d transactions, want %d: all %d writes in the first", batches, 1+tc.rollbacks, n)
			}
		})
	}
}

func runName(i int) string { return fmt.Sprintf("run-%d", i) }

// execution is a minimal execution row of runID.
func execution(runID string) *types.Execution {
	return &types.Execution{RunID: runID, Tool: "t", CallID: "c", Code: "ok", OK: true}
}
