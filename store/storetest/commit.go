package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var commitCases = []testCase{
	{"WritesAll", testCommitWritesAll},
	{"EmptyStatusDeletesOperation", testCommitDeletesOperation},
	{"ExecutionRoundTrip", testCommitExecutionRoundTrip},
	{"VersionConflictWritesNothing", testCommitVersionConflict},
	{"WithoutStateNoCheck", testCommitWithoutState},
	{"VersionsIncrease", testCommitVersionsIncrease},
	{"UnknownRun", testCommitUnknownRun},
	{"UnknownOperationWritesNothing", testCommitUnknownOperation},
	{"ConcurrentOptimistic", testCommitConcurrentOptimistic},
	{"CopiesIn", testCommitCopiesIn},
	{"RequiresExecution", testCommitRequiresExecution},
	{"TakeStep", testCommitTakeStep},
}

// newExecution returns an execution row of runID with every field set.
func newExecution(runID, tool string, finished time.Time) *types.Execution {
	return &types.Execution{
		RunID:        runID,
		Step:         1,
		CallID:       "toolu_01",
		Tool:         tool,
		Dependency:   "payments",
		ArgsHash:     "sha256:args",
		Args:         json.RawMessage(`{"order_id":"o-1","amount_paise":` + exactLimit + `}`),
		OperationKey: "refund:o-1",
		Code:         types.CodeOK,
		OK:           true,
		SideEffect:   types.SideEffectCommitted,
		Replayed:     true,
		Verified:     true,
		Attempts:     3,
		Retries:      2,
		LatencyMS:    12.625,
		InputTokens:  1200,
		OutputTokens: 34,
		StartedAt:    finished.Add(-12625 * time.Microsecond),
		FinishedAt:   finished,
		StatePatch:   json.RawMessage(`{"refunded":` + exactLimit + `}`),
		Result:       json.RawMessage(`{"ok":true,"data":{"refund_id":"r-1","amount":1.10}}`),
		TraceID:      "4bf92f3577b34da6a3ce929d0e0e4736",
	}
}

// commit writes c or fails the test.
func commit(t *testing.T, s store.Store, c *store.Commit) {
	t.Helper()
	if err := s.Commit(t.Context(), c); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// ensureRun creates an unlimited run with that id unless it exists.
func ensureRun(t *testing.T, s store.Store, id string) {
	t.Helper()
	run := newRun(id)
	run.MaxSteps = 0
	if err := s.CreateRun(t.Context(), run); err != nil && !errors.Is(err, store.ErrRunExists) {
		t.Fatalf("CreateRun(%q): %v", id, err)
	}
}

// completeOperation begins an operation of run-1 and completes it by a
// Commit at base, without a state update.
func completeOperation(t *testing.T, s store.Store, key string) {
	t.Helper()
	ensureRun(t, s, "run-1")
	begin(t, s, newOperation(key))
	commit(t, s, &store.Commit{
		Execution: newExecution("run-1", "refund", at(0)),
		Operation: &store.OperationUpdate{Key: key, Status: types.OpCompleted, Result: json.RawMessage(`{"ok":true}`), At: at(0)},
	})
}

// listRun returns every execution row of a run, oldest first.
func listRun(t *testing.T, s store.Store, runID string) []types.Execution {
	t.Helper()
	rows, err := s.ListExecutions(t.Context(), types.ExecutionFilter{RunID: runID, Ascending: true})
	if err != nil {
		t.Fatalf("ListExecutions(%q): %v", runID, err)
	}
	return rows
}

// checkExecution fails the test unless got is want: JSON compared as
// values, times as instants.
func checkExecution(t *testing.T, got, want types.Execution) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want json.RawMessage
	}{{"args", got.Args, want.Args}, {"state_patch", got.StatePatch, want.StatePatch}, {"result", got.Result, want.Result}} {
		checkJSON(t, "execution "+f.name, f.got, f.want)
	}
	checkTime(t, "execution started_at", got.StartedAt, want.StartedAt)
	checkTime(t, "execution finished_at", got.FinishedAt, want.FinishedAt)
	got.Args, got.StatePatch, got.Result = nil, nil, nil
	want.Args, want.StatePatch, want.Result = nil, nil, nil
	got.StartedAt, got.FinishedAt = time.Time{}, time.Time{}
	want.StartedAt, want.FinishedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("execution =\n%+v\nwant\n%+v", got, want)
	}
}

func testCommitWritesAll(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	begin(t, s, newOperation("op-1"))
	exec := newExecution("run-1", "refund", at(time.Second))
	result := json.RawMessage(`{"ok":true,"data":{"refund_id":"r-1"}}`)
	newState := json.RawMessage(`{"balance":1,"refunds":["r-1"]}`)
	c := &store.Commit{
		Execution:     exec,
		Operation:     &store.OperationUpdate{Key: "op-1", Status: types.OpCompleted, Result: result, At: at(time.Second)},
		NewState:      newState,
		ExpectVersion: 0,
	}
	commit(t, s, c)

	if exec.ID <= 0 || exec.Version != 1 {
		t.Errorf("Commit filled id %d version %d, want id > 0 and version 1", exec.ID, exec.Version)
	}
	run := getRun(t, s, "run-1")
	if run.Version != 1 {
		t.Errorf("run version = %d, want 1", run.Version)
	}
	checkJSON(t, "run state", run.State, newState)
	checkJSON(t, "run initial state", run.InitialState, newRun("run-1").State)

	op := getOperation(t, s, "op-1")
	if op.Status != types.OpCompleted || op.ArgsHash != "sha256:op-1" {
		t.Errorf("operation = status %s hash %q, want completed sha256:op-1", op.Status, op.ArgsHash)
	}
	checkJSON(t, "operation result", op.Result, result)
	checkTime(t, "operation completed_at", op.CompletedAt, at(time.Second))
	checkTime(t, "operation updated_at", op.UpdatedAt, at(time.Second))

	rows := listRun(t, s, "run-1")
	if len(rows) != 1 {
		t.Fatalf("%d execution rows, want 1", len(rows))
	}
	checkExecution(t, rows[0], *exec)
}

func testCommitExecutionRoundTrip(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	exec := newExecution("run-1", "refund", at(time.Second))
	want := *exec
	commit(t, s, &store.Commit{Execution: exec})
	want.ID, want.Version = exec.ID, 1

	rows := listRun(t, s, "run-1")
	if len(rows) != 1 {
		t.Fatalf("%d execution rows, want 1", len(rows))
	}
	checkExecution(t, rows[0], want)

	// A failed, minimal row: empty optional fields come back empty.
	minimal := &types.Execution{RunID: "run-1", Tool: "search", Code: types.CodeWrongType, SideEffect: types.SideEffectNone,
		StartedAt: at(2 * time.Second), FinishedAt: at(2 * time.Second), Result: json.RawMessage(`{"ok":false}`)}
	wantMinimal := *minimal
	commit(t, s, &store.Commit{Execution: minimal})
	wantMinimal.ID, wantMinimal.Version = minimal.ID, 2
	rows = listRun(t, s, "run-1")
	if len(rows) != 2 {
		t.Fatalf("%d execution rows, want 2", len(rows))
	}
	checkExecution(t, rows[1], wantMinimal)
}

func testCommitVersionConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	createRun(t, s, newRun("run-1"))
	firstState := json.RawMessage(`{"balance":1}`)
	commit(t, s, &store.Commit{Execution: newExecution("run-1", "refund", at(time.Second)), NewState: firstState, ExpectVersion: 0})
	begin(t, s, newOperation("op-1"))

	exec := newExecution("run-1", "refund", at(2*time.Second))
	err := s.Commit(ctx, &store.Commit{
		Execution:     exec,
		Operation:     &store.OperationUpdate{Key: "op-1", Status: types.OpCompleted, Result: json.RawMessage(`{"ok":true}`), At: at(2 * time.Second)},
		NewState:      json.RawMessage(`{"balance":2}`),
		ExpectVersion: 0, // the run is at 1
	})
	if !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("Commit at a stale version = %v, want ErrVersionConflict", err)
	}
	if exec.ID != 0 || exec.Version != 0 {
		t.Errorf("refused Commit filled id %d version %d, want 0 0", exec.ID, exec.Version)
	}
	if rows := listRun(t, s, "run-1"); len(rows) != 1 {
		t.Errorf("%d execution rows after a refused Commit, want 1", len(rows))
	}
	op := getOperation(t, s, "op-1")
	if op.Status != types.OpStarted || len(op.Result) != 0 {
		t.Errorf("operation after a refused Commit = %s %s, want started without result", op.Status, op.Result)
	}
	run := getRun(t, s, "run-1")
	if run.Version != 1 {
		t.Errorf("run version after a refused Commit = %d, want 1", run.Version)
	}
	checkJSON(t, "state after a refused Commit", run.State, firstState)
}

func testCommitWithoutState(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	exec := newExecution("run-1", "refund", at(time.Second))
	// No NewState: ExpectVersion is not checked.
	commit(t, s, &store.Commit{Execution: exec, ExpectVersion: 42})
	if exec.Version != 1 {
		t.Errorf("execution version = %d, want 1", exec.Version)
	}
	run := getRun(t, s, "run-1")
	if run.Version != 1 {
		t.Errorf("run version = %d, want 1", run.Version)
	}
	checkJSON(t, "state after a Commit without state", run.State, newRun("run-1").State)
}

func testCommitVersionsIncrease(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	ensureRun(t, s, "run-2")
	var lastID int64
	for i := range 6 {
		runID := "run-" + strconv.Itoa(1+i%2)
		exec := newExecution(runID, "search", at(time.Duration(i)*time.Second))
		commit(t, s, &store.Commit{Execution: exec, NewState: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`), ExpectVersion: int64(i / 2)})
		if exec.ID <= lastID {
			t.Errorf("execution id %d after %d, want increasing", exec.ID, lastID)
		}
		lastID = exec.ID
		if want := int64(i/2 + 1); exec.Version != want {
			t.Errorf("commit %d on %s: version %d, want %d", i, runID, exec.Version, want)
		}
	}
	for _, runID := range []string{"run-1", "run-2"} {
		if v := getRun(t, s, runID).Version; v != 3 {
			t.Errorf("%s version = %d, want 3", runID, v)
		}
		for i, row := range listRun(t, s, runID) {
			if row.Version != int64(i+1) {
				t.Errorf("%s row %d has version %d, want %d", runID, i, row.Version, i+1)
			}
		}
	}
}

func testCommitUnknownRun(t *testing.T, s store.Store) {
	err := s.Commit(t.Context(), &store.Commit{Execution: newExecution("no-such-run", "refund", at(0))})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Commit to an unknown run = %v, want ErrNotFound", err)
	}
	if rows := listRun(t, s, "no-such-run"); len(rows) != 0 {
		t.Errorf("%d rows written for an unknown run", len(rows))
	}
}

func testCommitUnknownOperation(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	err := s.Commit(t.Context(), &store.Commit{
		Execution: newExecution("run-1", "refund", at(0)),
		Operation: &store.OperationUpdate{Key: "no-such-key", Status: types.OpCompleted, At: at(0)},
		NewState:  json.RawMessage(`{"balance":2}`),
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Commit settling an unknown operation = %v, want ErrNotFound", err)
	}
	if rows := listRun(t, s, "run-1"); len(rows) != 0 {
		t.Errorf("%d rows written by a failed Commit", len(rows))
	}
	run := getRun(t, s, "run-1")
	if run.Version != 0 {
		t.Errorf("run version after a failed Commit = %d, want 0", run.Version)
	}
	checkJSON(t, "state after a failed Commit", run.State, newRun("run-1").State)
}

// testCommitConcurrentOptimistic runs the read, apply, commit loop of the
// pipeline from many goroutines: every increment lands exactly once.
func testCommitConcurrentOptimistic(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	const n = 20
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = incrementCounter(t, s, "run-1")
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	run := getRun(t, s, "run-1")
	checkJSON(t, "counter state", run.State, json.RawMessage(`{"counter":20}`))
	if run.Version != n {
		t.Errorf("run version = %d, want %d", run.Version, n)
	}
	if rows := listRun(t, s, "run-1"); len(rows) != n {
		t.Errorf("%d execution rows, want %d (conflicts must write nothing)", len(rows), n)
	}
}

// incrementCounter adds one to the run's counter, re-reading and applying
// again on every version conflict.
func incrementCounter(t *testing.T, s store.Store, runID string) error {
	for {
		run, err := s.GetRun(t.Context(), runID)
		if err != nil {
			return err
		}
		var state struct {
			Counter int `json:"counter"`
		}
		_ = json.Unmarshal(run.State, &state) // the first state has no counter
		state.Counter++
		next, _ := json.Marshal(state)
		err = s.Commit(t.Context(), &store.Commit{
			Execution:     newExecution(runID, "increment", at(0)),
			NewState:      next,
			ExpectVersion: run.Version,
		})
		if !errors.Is(err, store.ErrVersionConflict) {
			return err
		}
	}
}

func testCommitCopiesIn(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	exec := newExecution("run-1", "refund", at(0))
	want := *newExecution("run-1", "refund", at(0))
	state := json.RawMessage(`{"balance":7}`)
	commit(t, s, &store.Commit{Execution: exec, NewState: state})
	want.ID, want.Version = exec.ID, exec.Version

	exec.Args[2] = 'X'
	exec.Result[2] = 'X'
	state[2] = 'X'
	checkExecution(t, listRun(t, s, "run-1")[0], want)
	checkJSON(t, "state after the caller changed its copy", getRun(t, s, "run-1").State, json.RawMessage(`{"balance":7}`))

	rows := listRun(t, s, "run-1")
	rows[0].Args[2] = 'Y'
	checkExecution(t, listRun(t, s, "run-1")[0], want)
}

func testCommitRequiresExecution(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	if err := s.Commit(t.Context(), &store.Commit{}); err == nil {
		t.Fatal("Commit without an execution succeeded")
	}
	if v := getRun(t, s, "run-1").Version; v != 0 {
		t.Errorf("run version after a Commit without execution = %d, want 0", v)
	}
}

// testCommitDeletesOperation: an empty status removes the ledger record
// (the operation provably did not happen), so the key can begin afresh.
func testCommitDeletesOperation(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	begin(t, s, newOperation("op-1"))
	commit(t, s, &store.Commit{
		Execution: newExecution("run-1", "refund", at(time.Second)),
		Operation: &store.OperationUpdate{Key: "op-1", At: at(time.Second)},
	})
	if _, err := s.GetOperation(t.Context(), "op-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetOperation after delete: %v, want ErrNotFound", err)
	}
	if _, began, err := s.BeginOperation(t.Context(), newOperation("op-1")); err != nil || !began {
		t.Fatalf("BeginOperation after delete: began=%v err=%v, want a fresh start", began, err)
	}
	if rows := listRun(t, s, "run-1"); len(rows) != 1 {
		t.Errorf("%d execution rows, want 1", len(rows))
	}
}

// testCommitTakeStep: a commit with TakeStep takes the run's next step
// after the steps AdmitStep took, gives the row that step and TakeStep's
// result, and, once max_steps are taken, fails with ErrStepBudget and
// writes nothing.
func testCommitTakeStep(t *testing.T, s store.Store) {
	ctx := t.Context()
	run := newRun("run-1")
	run.MaxSteps = 3
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if step, err := s.AdmitStep(ctx, "run-1"); err != nil || step != 1 {
		t.Fatalf("AdmitStep = %d, %v; want 1", step, err)
	}
	take := func(calls *[]int64) func(int64) json.RawMessage {
		return func(step int64) json.RawMessage {
			*calls = append(*calls, step)
			return json.RawMessage(`{"ok":true,"meta":{"step":` + strconv.FormatInt(step, 10) + `}}`)
		}
	}
	var calls []int64
	e := newExecution("run-1", "get_order", at(time.Second))
	e.Step, e.OperationKey = 0, ""
	commit(t, s, &store.Commit{Execution: e, TakeStep: take(&calls)})
	if len(calls) == 0 || calls[len(calls)-1] != 2 || e.Step != 2 {
		t.Fatalf("TakeStep called with %v, row step %d; want the last call with 2, step 2", calls, e.Step)
	}
	if step, err := s.AdmitStep(ctx, "run-1"); err != nil || step != 3 {
		t.Fatalf("AdmitStep after the commit = %d, %v; want 3", step, err)
	}
	rows := listRun(t, s, "run-1")
	if len(rows) != 1 || rows[0].Step != 2 || !sameJSON(rows[0].Result, json.RawMessage(`{"ok":true,"meta":{"step":2}}`)) {
		t.Fatalf("rows %+v; want one row at step 2 with the result TakeStep gave", rows)
	}
	before, err := s.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}

	// The budget is spent: nothing is written.
	e = newExecution("run-1", "get_order", at(2*time.Second))
	e.OperationKey = ""
	err = s.Commit(ctx, &store.Commit{Execution: e, TakeStep: take(&calls)})
	if !errors.Is(err, store.ErrStepBudget) {
		t.Fatalf("Commit with TakeStep beyond max_steps = %v, want ErrStepBudget", err)
	}
	after, err := s.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if after.Step != before.Step || after.Version != before.Version || len(listRun(t, s, "run-1")) != 1 {
		t.Fatalf("a refused commit changed the run (step %d -> %d, version %d -> %d) or wrote a row",
			before.Step, after.Step, before.Version, after.Version)
	}
	if err := s.Commit(ctx, &store.Commit{Execution: newExecution("no-such-run", "t", at(0)), TakeStep: take(&calls)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Commit with TakeStep to an unknown run = %v, want ErrNotFound", err)
	}
}
