package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// exactLimit is 2^53 + 1: a float64 cannot hold it.
const exactLimit = "9007199254740993"

var runCases = []testCase{
	{"RoundTrip", testRunRoundTrip},
	{"InitialStateKept", testRunInitialStateKept},
	{"CopiesInAndOut", testRunCopies},
	{"Duplicate", testRunDuplicate},
	{"NotFound", testRunNotFound},
	{"CancelledContext", testRunCancelledContext},
}

var admitCases = []testCase{
	{"Sequence", testAdmitSequence},
	{"Budget", testAdmitBudget},
	{"NotFound", testAdmitNotFound},
	{"Concurrent", testAdmitConcurrent},
	{"ConcurrentBudget", testAdmitConcurrentBudget},
}

// newRun returns a run with every field the store keeps set, Step and
// Version included (CreateRun must reset them to 0).
func newRun(id string) *types.Run {
	return &types.Run{
		ID:    id,
		Owner: "key-ops",
		Principal: types.Principal{
			ID:          "user-7",
			Permissions: []string{"refunds.create", "orders.read"},
			Limits:      map[string]json.Number{"max_refund_paise": exactLimit},
			Attrs:       map[string]any{"tier": "gold"},
		},
		State:     json.RawMessage(`{"balance":` + exactLimit + `,"items":["a","b"]}`),
		Step:      9,
		Version:   9,
		MaxSteps:  5,
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
}

// createRun creates a run or fails the test.
func createRun(t *testing.T, s store.Store, run *types.Run) {
	t.Helper()
	if err := s.CreateRun(t.Context(), run); err != nil {
		t.Fatalf("CreateRun(%q): %v", run.ID, err)
	}
}

// getRun reads a run or fails the test.
func getRun(t *testing.T, s store.Store, id string) *types.Run {
	t.Helper()
	run, err := s.GetRun(t.Context(), id)
	if err != nil {
		t.Fatalf("GetRun(%q): %v", id, err)
	}
	return run
}

func testRunRoundTrip(t *testing.T, s store.Store) {
	want := newRun("run-1")
	createRun(t, s, want)
	got := getRun(t, s, "run-1")

	if got.ID != want.ID || got.Owner != want.Owner || got.MaxSteps != want.MaxSteps {
		t.Errorf("GetRun = id %q owner %q max_steps %d, want %q %q %d",
			got.ID, got.Owner, got.MaxSteps, want.ID, want.Owner, want.MaxSteps)
	}
	if got.Step != 0 || got.Version != 0 {
		t.Errorf("new run at step %d version %d, want 0 0", got.Step, got.Version)
	}
	if limit := got.Principal.Limits["max_refund_paise"]; limit != exactLimit {
		t.Errorf("principal limit = %q, want exactly %q", limit, exactLimit)
	}
	checkJSON(t, "principal", mustJSON(t, got.Principal), mustJSON(t, want.Principal))
	checkJSON(t, "state", got.State, want.State)
	if !bytes.Contains(got.State, []byte(exactLimit)) {
		t.Errorf("state %s lost the exact number %s", got.State, exactLimit)
	}
	checkJSON(t, "initial state (defaults to state)", got.InitialState, want.State)
	checkTime(t, "created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, "updated_at", got.UpdatedAt, want.UpdatedAt)
}

func testRunInitialStateKept(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.InitialState = json.RawMessage(`{"balance":0}`)
	createRun(t, s, run)
	got := getRun(t, s, "run-1")
	checkJSON(t, "initial state", got.InitialState, run.InitialState)
	checkJSON(t, "state", got.State, run.State)
}

func testRunCopies(t *testing.T, s store.Store) {
	run := newRun("run-1")
	want := newRun("run-1")
	createRun(t, s, run)
	// The caller's values change after CreateRun: the store must not see it.
	run.State[2] = 'X'
	run.Principal.Permissions[0] = "*"
	run.Principal.Limits["max_refund_paise"] = "1"

	got := getRun(t, s, "run-1")
	checkJSON(t, "state after the caller changed its copy", got.State, want.State)
	checkJSON(t, "principal after the caller changed its copy", mustJSON(t, got.Principal), mustJSON(t, want.Principal))

	// The returned values change: the store must not see it either.
	got.State[2] = 'Y'
	got.Principal.Permissions[0] = "*"
	got.Principal.Limits["max_refund_paise"] = "2"
	again := getRun(t, s, "run-1")
	checkJSON(t, "state after a reader changed its copy", again.State, want.State)
	checkJSON(t, "principal after a reader changed its copy", mustJSON(t, again.Principal), mustJSON(t, want.Principal))
}

func testRunDuplicate(t *testing.T, s store.Store) {
	createRun(t, s, newRun("run-1"))
	second := newRun("run-1")
	second.State = json.RawMessage(`{"other":true}`)
	if err := s.CreateRun(t.Context(), second); !errors.Is(err, store.ErrRunExists) {
		t.Fatalf("second CreateRun = %v, want ErrRunExists", err)
	}
	checkJSON(t, "state after a refused duplicate", getRun(t, s, "run-1").State, newRun("run-1").State)
}

func testRunNotFound(t *testing.T, s store.Store) {
	if _, err := s.GetRun(t.Context(), "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun(unknown) = %v, want ErrNotFound", err)
	}
}

func testRunCancelledContext(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.CreateRun(ctx, newRun("run-1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateRun(cancelled ctx) = %v, want context.Canceled", err)
	}
	if _, err := s.GetRun(t.Context(), "run-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun after a cancelled CreateRun = %v, want ErrNotFound", err)
	}
}

func testAdmitSequence(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 0
	createRun(t, s, run)
	for want := int64(1); want <= 3; want++ {
		got, err := s.AdmitStep(t.Context(), "run-1")
		if err != nil || got != want {
			t.Fatalf("AdmitStep = %d, %v; want %d, nil", got, err, want)
		}
	}
	if got := getRun(t, s, "run-1"); got.Step != 3 {
		t.Errorf("run step = %d, want 3", got.Step)
	}
}

func testAdmitBudget(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 2
	createRun(t, s, run)
	for want := int64(1); want <= 2; want++ {
		if got, err := s.AdmitStep(t.Context(), "run-1"); err != nil || got != want {
			t.Fatalf("AdmitStep = %d, %v; want %d, nil", got, err, want)
		}
	}
	for range 2 {
		if _, err := s.AdmitStep(t.Context(), "run-1"); !errors.Is(err, store.ErrStepBudget) {
			t.Fatalf("AdmitStep beyond max_steps = %v, want ErrStepBudget", err)
		}
	}
	if got := getRun(t, s, "run-1"); got.Step != 2 {
		t.Errorf("run step after refusals = %d, want 2", got.Step)
	}
}

func testAdmitNotFound(t *testing.T, s store.Store) {
	if _, err := s.AdmitStep(t.Context(), "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AdmitStep(unknown) = %v, want ErrNotFound", err)
	}
}

// admitConcurrently calls AdmitStep from n goroutines at once and returns
// the steps taken and how many were refused for the budget.
func admitConcurrently(t *testing.T, s store.Store, runID string, n int) (steps []int64, refused int) {
	t.Helper()
	results := make([]int64, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.AdmitStep(t.Context(), runID)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
			steps = append(steps, results[i])
		case errors.Is(err, store.ErrStepBudget):
			refused++
		default:
			t.Fatalf("concurrent AdmitStep: %v", err)
		}
	}
	slices.Sort(steps)
	return steps, refused
}

func testAdmitConcurrent(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 0
	createRun(t, s, run)
	steps, _ := admitConcurrently(t, s, "run-1", 50)
	if len(steps) != 50 {
		t.Fatalf("%d of 50 concurrent admissions succeeded", len(steps))
	}
	for i, step := range steps {
		if step != int64(i+1) {
			t.Fatalf("concurrent steps = %v, want 1..50 each once", steps)
		}
	}
}

func testAdmitConcurrentBudget(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 20
	createRun(t, s, run)
	steps, refused := admitConcurrently(t, s, "run-1", 50)
	if len(steps) != 20 || refused != 30 {
		t.Fatalf("50 admissions under max_steps 20: %d admitted, %d refused; want 20, 30", len(steps), refused)
	}
	for i, step := range steps {
		if step != int64(i+1) {
			t.Fatalf("admitted steps = %v, want 1..20 each once", steps)
		}
	}
}
