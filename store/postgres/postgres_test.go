package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/store/storetest"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	postgrestest.URL(t) // skip (or fail under CI) once, not in every subtest
	storetest.Run(t, func(t *testing.T) store.Store { return postgrestest.Open(t, postgres.Options{}) })
}

// TestJSONByteForByte: documents come back as the very bytes that went in
// (key order, spacing, a number no float64 holds), not merely as the same
// value: the columns are json, never jsonb.
func TestJSONByteForByte(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{})
	ctx := t.Context()
	state := json.RawMessage(`{"z": 9007199254740993, "a":[1.10, 2e3],  "m":{"y":1,"x":2}}`)
	run := &types.Run{ID: "run-1", Principal: types.Principal{ID: "u"}, State: state}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.State, state) || !bytes.Equal(got.InitialState, state) {
		t.Errorf("state = %s, initial %s; want exactly %s", got.State, got.InitialState, state)
	}
	result := json.RawMessage(`{"ok":true, "data":{"b":9007199254740993,"a":0.1}}`)
	exec := &types.Execution{RunID: "run-1", Tool: "t", Args: state, Result: result, StatePatch: result}
	if err := s.Commit(ctx, &store.Commit{Execution: exec, NewState: result}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.ListExecutions(ctx, types.ExecutionFilter{RunID: "run-1"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("ListExecutions = %d rows, %v", len(rows), err)
	}
	if !bytes.Equal(rows[0].Args, state) || !bytes.Equal(rows[0].Result, result) || !bytes.Equal(rows[0].StatePatch, result) {
		t.Errorf("row = args %s result %s patch %s; want the bytes given", rows[0].Args, rows[0].Result, rows[0].StatePatch)
	}
	if got, _ := s.GetRun(ctx, "run-1"); !bytes.Equal(got.State, result) {
		t.Errorf("committed state = %s, want exactly %s", got.State, result)
	}
}

// TestNanoseconds: timestamps keep their nanoseconds (timestamptz would
// keep microseconds).
func TestNanoseconds(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{})
	at := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	if err := s.CreateRun(t.Context(), &types.Run{ID: "r", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(t.Context(), "r")
	if err != nil || !got.CreatedAt.Equal(at) {
		t.Fatalf("created_at = %v, %v; want %v", got.CreatedAt, err, at)
	}
}

// TestWriteContext: a write's ctx's cancellation governs its admission
// only. A write that holds a connection runs to its end and answers the
// true outcome even when its ctx is cancelled meanwhile; a write still
// waiting for a connection when its ctx ends answers the context's error
// and writes nothing. (Its deadline bounds the write: TestWriteDeadline.)
func TestWriteContext(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{MaxConns: 1})
	if err := s.CreateRun(t.Context(), &types.Run{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	// Another session locks the run's row, so the admitted write waits.
	locker, tx := lockRun(t, s, "r")

	type admitted struct {
		step int64
		err  error
	}
	first := make(chan admitted, 1)
	short, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		step, err := s.AdmitStep(short, "r")
		first <- admitted{step, err}
	}()
	// Wait until it holds the only connection and waits for the lock.
	for blocked := 0; blocked == 0; {
		err := locker.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))",
			locker.PgConn().PID()).Scan(&blocked)
		if err != nil {
			t.Fatal(err)
		}
		if short.Err() != nil {
			t.Fatal("the first AdmitStep was not admitted before its ctx ended")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// The pool is empty: this one is never admitted.
	waiting, cancelWaiting := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancelWaiting()
	if _, err := s.AdmitStep(waiting, "r"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AdmitStep waiting for a connection = %v, want context.DeadlineExceeded", err)
	}
	cancel()
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := <-first
	if got.err != nil || got.step != 1 {
		t.Fatalf("admitted AdmitStep whose ctx ended = %d, %v; want 1, nil", got.step, got.err)
	}
	if run, err := s.GetRun(t.Context(), "r"); err != nil || run.Step != 1 {
		t.Fatalf("run step = %v, %v; want 1 (the refused admission wrote nothing)", run, err)
	}
}

// TestExpireLeasesEvery: the background expiry turns a dead owner's
// started operation unknown without anyone calling ExpireLeases, and Close
// stops it (goleak checks).
func TestExpireLeasesEvery(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := postgrestest.Open(t, postgres.Options{Clock: fake, ExpireLeasesEvery: 10 * time.Millisecond})
	op := &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t", LeaseUntil: fake.Now().Add(-time.Second)}
	if _, began, err := s.BeginOperation(t.Context(), op); err != nil || !began {
		t.Fatalf("BeginOperation = %v, %v", began, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.GetOperation(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == types.OpUnknown {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation still %s after 10s of background expiry", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockRun makes another session lock the run's row (SELECT ... FOR
// UPDATE in a transaction it leaves open), so that a write of that run
// waits; the caller rolls tx back to free it. The session closes with the
// test.
func lockRun(t *testing.T, s *postgres.Store, id string) (*pgx.Conn, pgx.Tx) {
	t.Helper()
	locker, err := pgx.Connect(t.Context(), postgrestest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(context.Background()) })
	tx, err := locker.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "SELECT 1 FROM "+pgx.Identifier{s.Schema(), "runs"}.Sanitize()+" WHERE id = $1 FOR UPDATE", id); err != nil {
		t.Fatal(err)
	}
	return locker, tx
}
