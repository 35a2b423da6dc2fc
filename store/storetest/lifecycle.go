package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var lifecycleCases = []testCase{
	{"Ping", testPing},
	{"Closed", testClosed},
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testClosed(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	begin(t, s, newOperation("op-1"))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	calls := map[string]func() error{
		"CreateRun": func() error { return s.CreateRun(ctx, newRun("run-2")) },
		"GetRun":    func() error { _, err := s.GetRun(ctx, "run-1"); return err },
		"AdmitStep": func() error { _, err := s.AdmitStep(ctx, "run-1"); return err },
		"BeginOperation": func() error {
			_, _, err := s.BeginOperation(ctx, newOperation("op-2"))
			return err
		},
		"GetOperation":   func() error { _, err := s.GetOperation(ctx, "op-1"); return err },
		"ClaimOperation": func() error { _, err := s.ClaimOperation(ctx, "op-1", "owner-b", at(time.Hour)); return err },
		"ExpireLeases":   func() error { _, err := s.ExpireLeases(ctx, at(time.Hour)); return err },
		"AbandonOwner":   func() error { _, err := s.AbandonOwner(ctx, ""); return err },
		"ListOperations": func() error { _, err := s.ListOperations(ctx, types.OpStarted, 0); return err },
		"Commit": func() error {
			return s.Commit(ctx, &store.Commit{Execution: newExecution("run-1", "refund", at(0))})
		},
		"ListExecutions": func() error { _, err := s.ListExecutions(ctx, types.ExecutionFilter{}); return err },
		"Prune":          func() error { _, err := s.Prune(ctx, at(0)); return err },
		"Ping":           func() error { return s.Ping(ctx) },
		"Close":          s.Close,
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}
