package storetest

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var admitAndBeginCases = []testCase{
	{"StepsAndLedger", testAdmitAndBegin},
	{"BudgetBeginsNothing", testAdmitAndBeginBudget},
}

func testAdmitAndBegin(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	step, existing, began, err := s.AdmitAndBegin(t.Context(), "run-1", newOperation("op-1"))
	if err != nil || step != 1 || !began || existing != nil {
		t.Fatalf("first: step %d began %v existing %v err %v", step, began, existing, err)
	}
	if got := getOperation(t, s, "op-1"); got.Status != types.OpStarted {
		t.Errorf("operation is %s, want started", got.Status)
	}
	step, existing, began, err = s.AdmitAndBegin(t.Context(), "run-1", newOperation("op-1"))
	if err != nil || step != 2 || began || existing == nil || existing.Key != "op-1" {
		t.Fatalf("repeat: step %d began %v existing %+v err %v", step, began, existing, err)
	}
	if _, _, _, err := s.AdmitAndBegin(t.Context(), "no-such-run", newOperation("op-2")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
}

func testAdmitAndBeginBudget(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 1
	createRun(t, s, run)
	if _, _, _, err := s.AdmitAndBegin(t.Context(), "run-1", newOperation("op-1")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.AdmitAndBegin(t.Context(), "run-1", newOperation("op-2")); !errors.Is(err, store.ErrStepBudget) {
		t.Fatalf("over budget: %v, want ErrStepBudget", err)
	}
	if _, err := s.GetOperation(t.Context(), "op-2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an operation was begun past the budget: %v", err)
	}
}
