package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// TestWriteDeadline: a write that holds a connection and gets no answer
// (another session holds the run's row) ends at its ctx's deadline, not at
// WriteTimeout, with an error that wraps store.ErrUnavailable and is not
// the context's own (its outcome is unknown). So do a batched write (Commit)
// and a single write (AdmitStep); once the row is free, both succeed.
func TestWriteDeadline(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{WriteTimeout: time.Minute})
	if err := s.CreateRun(t.Context(), &types.Run{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	_, tx := lockRun(t, s, "r")
	commit := func(ctx context.Context) error {
		return s.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r", Tool: "t", Code: types.CodeOK}})
	}
	admit := func(ctx context.Context) error { _, err := s.AdmitStep(ctx, "r"); return err }
	for name, write := range map[string]func(context.Context) error{"commit (batched)": commit, "admit step (single)": admit} {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		err := write(ctx)
		cancel()
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s cut by its deadline = %v; want store.ErrUnavailable, not the context's error", name, err)
		}
		// (Bounded by WriteTimeout alone, each would wait a minute.)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(context.Context) error{"commit (batched)": commit, "admit step (single)": admit} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := write(ctx); err != nil {
			t.Errorf("%s once the row is free: %v", name, err)
		}
		cancel()
	}
}
