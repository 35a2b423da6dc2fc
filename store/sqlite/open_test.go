package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

// exact is 2^53 + 1: a float64 cannot hold it.
const exact = "9007199254740993"

// rawDB opens the file with the bare driver, for what the store does not
// show (pragmas, column types), and closes it when t ends.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{Owner: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	run := &types.Run{
		ID:        "run-1",
		Principal: types.Principal{ID: "u", Limits: map[string]json.Number{"max": exact}},
		State:     json.RawMessage(`{"balance": ` + exact + `}`),
		MaxSteps:  10,
	}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitStep(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"op-done", "op-running"} {
		if _, _, err := s.BeginOperation(ctx, &types.Operation{Key: key, ArgsHash: "h", RunID: "run-1", Tool: "refund",
			LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	exec := &types.Execution{RunID: "run-1", Step: 1, Tool: "refund", Code: types.CodeOK, OK: true,
		StartedAt: now, FinishedAt: now, Args: json.RawMessage(`{"amount":` + exact + `}`), Result: json.RawMessage(`{"ok":true}`)}
	err = s.Commit(ctx, &store.Commit{
		Execution: exec,
		Operation: &store.OperationUpdate{Key: "op-done", Status: types.OpCompleted, Result: json.RawMessage(`{"ok":true}`), At: now},
		NewState:  json.RawMessage(`{"balance":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(ctx, path, sqlite.Options{Owner: "node-a"})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	got, err := s.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != 1 || got.Version != 1 || got.MaxSteps != 10 || string(got.State) != `{"balance":1}` ||
		string(got.InitialState) != string(run.State) || got.Principal.Limits["max"] != exact {
		t.Errorf("run after reopen = %+v", got)
	}
	if op, err := s.GetOperation(ctx, "op-done"); err != nil || op.Status != types.OpCompleted || !op.CompletedAt.Equal(now) {
		t.Errorf("completed operation after reopen = %+v, %v", op, err)
	}
	rows, err := s.ListExecutions(ctx, types.ExecutionFilter{RunID: "run-1"})
	if err != nil || len(rows) != 1 || rows[0].ID != exec.ID || string(rows[0].Args) != string(exec.Args) {
		t.Errorf("executions after reopen = %+v, %v", rows, err)
	}
	// Open leaves the previous process's started operations alone; the
	// caller abandons them (the owner defaulted to Options.Owner).
	if op, err := s.GetOperation(ctx, "op-running"); err != nil || op.Status != types.OpStarted || op.Owner != "node-a" {
		t.Fatalf("started operation after reopen = %+v, %v", op, err)
	}
	if n, err := s.AbandonOwner(ctx, "node-a"); err != nil || n != 1 {
		t.Fatalf("AbandonOwner after restart = %d, %v; want 1", n, err)
	}

	// JSON is stored as TEXT, byte for byte.
	var kind, state string
	if err := rawDB(t, path).QueryRowContext(ctx, `SELECT typeof(initial_state), initial_state FROM runs`).Scan(&kind, &state); err != nil {
		t.Fatal(err)
	}
	if kind != "text" || state != string(run.State) {
		t.Errorf("initial_state stored as %s %q, want text %q", kind, state, run.State)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, &types.Run{ID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if _, err := raw.ExecContext(ctx, "PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}

	_, err = sqlite.Open(ctx, path, sqlite.Options{})
	var tooNew *sqlite.SchemaVersionError
	if !errors.As(err, &tooNew) || tooNew.Found != 7 || tooNew.Known != sqlite.SchemaVersion {
		t.Fatalf("Open(newer schema) = %v, want a SchemaVersionError 7 > %d", err, sqlite.SchemaVersion)
	}
	want := fmt.Sprintf("the store's schema version is 7, newer than this toolgate knows (%d): a newer toolgate wrote it, and this one will not touch it. "+
		"Run the newer toolgate again, or restore the backup taken before the upgrade (docs/upgrade.md, \"Downgrading\")", sqlite.SchemaVersion)
	if tooNew.Error() != want {
		t.Errorf("message = %q, want %q", tooNew.Error(), want)
	}
	// The file is untouched: same version, same data.
	var version, runs int
	if err := raw.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != 7 {
		t.Errorf("user_version after a refused Open = %d, %v; want 7", version, err)
	}
	if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&runs); err != nil || runs != 1 {
		t.Errorf("runs after a refused Open = %d, %v; want 1", runs, err)
	}
}

func TestOpenConfiguresFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := rawDB(t, path)
	var mode string
	var version int
	if err := raw.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := raw.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != sqlite.SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, sqlite.SchemaVersion)
	}
}

func TestOpenRefusesUnsharedPaths(t *testing.T) {
	for _, path := range []string{"", ":memory:", "file:x?mode=memory", filepath.Join(t.TempDir(), "a?b.db")} {
		if s, err := sqlite.Open(t.Context(), path, sqlite.Options{}); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}
