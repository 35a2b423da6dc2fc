package sqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// A batch holding an effect commits with an fsync; a batch of writes that
// record none (a step, the row of a read) does not. The switch is made
// outside transactions and only when the kind changes.
func TestLightWritesSkipTheFsyncEffectsDoNot(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "tg.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateRun(ctx, &types.Run{ID: "r", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	mode := func() int {
		var m int
		// The pragma reads the write connection's own mode.
		err := s.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
			return tx.queryRow(ctx, "PRAGMA synchronous", nil, &m)
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	const full = 2
	if _, err := s.AdmitStep(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().LightSwitches; got != 1 {
		t.Fatalf("light switches after an admission = %d, want 1", got)
	}
	// A read's row: light, no switch needed.
	row := &types.Execution{RunID: "r", Tool: "t", Code: "ok", StartedAt: time.Now(), FinishedAt: time.Now(), Result: json.RawMessage(`{}`)}
	if err := s.Commit(ctx, &store.Commit{Execution: row}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().LightSwitches; got != 1 {
		t.Fatalf("light switches = %d, want still 1", got)
	}
	// An operation: back to FULL before its batch.
	if _, _, err := s.BeginOperation(ctx, &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != full {
		t.Fatalf("after an effect the connection is synchronous=%d, want FULL (%d)", got, full)
	}
	// A state change is an effect too.
	row2 := *row
	if err := s.Commit(ctx, &store.Commit{Execution: &row2, NewState: json.RawMessage(`{"x":1}`), ExpectVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != full {
		t.Fatalf("after a state change: synchronous=%d, want FULL", got)
	}
	if _, err := s.AdmitStep(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().LightSwitches; got != 2 {
		t.Fatalf("light switches = %d, want 2", got)
	}
}
