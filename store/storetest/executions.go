package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var listExecutionCases = []testCase{
	{"Filters", testListExecutionFilters},
	{"DefaultLimit", testListExecutionDefaultLimit},
	{"Owner", testListExecutionOwner},
	{"CodeAndUntil", testListExecutionCodeAndUntil},
	{"Cursors", testListExecutionCursors},
	{"PagingWhileRowsArrive", testListExecutionPaging},
}

var pruneCases = []testCase{
	{"OldRowsOnly", testPrune},
}

func testListExecutionFilters(t *testing.T, s store.Store) {
	ensureRun(t, s, "r1")
	ensureRun(t, s, "r2")
	// Row n (1..5) finishes at base + n minutes.
	rows := []struct{ run, tool string }{
		{"r1", "search"}, {"r1", "refund"}, {"r2", "search"}, {"r1", "search"}, {"r2", "refund"},
	}
	ids := make([]int64, len(rows)+1)
	for i, r := range rows {
		exec := newExecution(r.run, r.tool, at(time.Duration(i+1)*time.Minute))
		commit(t, s, &store.Commit{Execution: exec})
		ids[i+1] = exec.ID
	}
	cases := []struct {
		name   string
		filter types.ExecutionFilter
		want   []int // row numbers
	}{
		{"all newest first", types.ExecutionFilter{}, []int{5, 4, 3, 2, 1}},
		{"all ascending", types.ExecutionFilter{Ascending: true}, []int{1, 2, 3, 4, 5}},
		{"run", types.ExecutionFilter{RunID: "r1"}, []int{4, 2, 1}},
		{"run ascending", types.ExecutionFilter{RunID: "r1", Ascending: true}, []int{1, 2, 4}},
		{"tool", types.ExecutionFilter{Tool: "search"}, []int{4, 3, 1}},
		{"run and tool", types.ExecutionFilter{RunID: "r1", Tool: "search"}, []int{4, 1}},
		{"since is inclusive", types.ExecutionFilter{Since: at(3 * time.Minute)}, []int{5, 4, 3}},
		{"since and tool", types.ExecutionFilter{Since: at(3 * time.Minute), Tool: "refund"}, []int{5}},
		{"limit", types.ExecutionFilter{Limit: 2}, []int{5, 4}},
		{"limit ascending", types.ExecutionFilter{Limit: 2, Ascending: true}, []int{1, 2}},
		{"unknown run", types.ExecutionFilter{RunID: "nope"}, nil},
	}
	for _, c := range cases {
		got, err := s.ListExecutions(t.Context(), c.filter)
		if err != nil {
			t.Fatalf("%s: ListExecutions: %v", c.name, err)
		}
		var gotIDs, wantIDs []int64
		for _, row := range got {
			gotIDs = append(gotIDs, row.ID)
		}
		for _, n := range c.want {
			wantIDs = append(wantIDs, ids[n])
		}
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s: ids %v, want %v", c.name, gotIDs, wantIDs)
		}
	}
}

func testListExecutionDefaultLimit(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	const n = 105
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Commit(t.Context(), &store.Commit{Execution: newExecution("run-1", "search", at(time.Duration(i)*time.Second))})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListExecutions(t.Context(), types.ExecutionFilter{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("ListExecutions without a limit returned %d rows, want 100", len(got))
	}
	if got[0].Version != n || got[99].Version != n-99 {
		t.Errorf("newest first: versions %d..%d, want %d..%d", got[0].Version, got[99].Version, n, n-99)
	}
}

func testPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	cutoff := at(0)
	ensureRun(t, s, "run-1")
	for _, finished := range []time.Duration{-2 * time.Hour, -time.Hour, time.Hour} {
		commit(t, s, &store.Commit{Execution: newExecution("run-1", "search", at(finished))})
	}
	settle := func(key string, when time.Duration) {
		begin(t, s, newOperation(key))
		commit(t, s, &store.Commit{
			Execution: newExecution("run-1", "refund", at(time.Hour)),
			Operation: &store.OperationUpdate{Key: key, Status: types.OpCompleted, At: at(when)},
		})
	}
	settle("done-old", -2*time.Hour)
	settle("done-new", time.Hour)
	// Old started and unknown records are never pruned.
	oldStarted := newOperation("started-old")
	oldStarted.CreatedAt, oldStarted.UpdatedAt, oldStarted.LeaseUntil = at(-3*time.Hour), at(-3*time.Hour), at(time.Hour)
	begin(t, s, oldStarted)
	oldUnknown := newOperation("unknown-old")
	oldUnknown.CreatedAt, oldUnknown.UpdatedAt, oldUnknown.LeaseUntil = at(-5*time.Hour), at(-5*time.Hour), at(-4*time.Hour)
	begin(t, s, oldUnknown)
	if n, err := s.ExpireLeases(ctx, at(-3*time.Hour)); err != nil || n != 1 {
		t.Fatalf("ExpireLeases = %d, %v; want 1, nil", n, err)
	}

	deleted, err := s.Prune(ctx, cutoff)
	if err != nil || deleted != 3 {
		t.Fatalf("Prune = %d, %v; want 3 (2 executions, 1 operation), nil", deleted, err)
	}
	for _, row := range listRun(t, s, "run-1") {
		if row.FinishedAt.Before(cutoff) {
			t.Errorf("row %d finished at %v survived the prune", row.ID, row.FinishedAt)
		}
	}
	if rows := listRun(t, s, "run-1"); len(rows) != 3 {
		t.Errorf("%d rows after the prune, want 3", len(rows))
	}
	if _, err := s.GetOperation(ctx, "done-old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetOperation(pruned) = %v, want ErrNotFound", err)
	}
	checkStatus(t, s, "done-new", types.OpCompleted)
	checkStatus(t, s, "started-old", types.OpStarted)
	checkStatus(t, s, "unknown-old", types.OpUnknown)

	if deleted, err := s.Prune(ctx, cutoff); err != nil || deleted != 0 {
		t.Fatalf("second Prune = %d, %v; want 0, nil", deleted, err)
	}
}

// testListExecutionOwner: the owner filter keeps the rows of the runs that
// owner owns, with the other filters and the limit applied after it.
func testListExecutionOwner(t *testing.T, s store.Store) {
	for id, owner := range map[string]string{"mine-1": "key-a", "mine-2": "key-a", "theirs": "key-b"} {
		run := newRun(id)
		run.Owner, run.MaxSteps = owner, 0
		if err := s.CreateRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
	}
	// Row n (1..6) finishes at base + n minutes.
	rows := []struct{ run, tool string }{
		{"mine-1", "search"}, {"theirs", "search"}, {"mine-2", "refund"}, {"theirs", "refund"}, {"theirs", "search"}, {"mine-1", "refund"},
	}
	ids := make([]int64, len(rows)+1)
	for i, r := range rows {
		exec := newExecution(r.run, r.tool, at(time.Duration(i+1)*time.Minute))
		commit(t, s, &store.Commit{Execution: exec})
		ids[i+1] = exec.ID
	}
	for _, c := range []struct {
		name   string
		filter types.ExecutionFilter
		want   []int
	}{
		{"owner", types.ExecutionFilter{Owner: "key-a"}, []int{6, 3, 1}},
		{"owner ascending", types.ExecutionFilter{Owner: "key-a", Ascending: true}, []int{1, 3, 6}},
		{"owner and tool", types.ExecutionFilter{Owner: "key-a", Tool: "refund"}, []int{6, 3}},
		{"owner and limit", types.ExecutionFilter{Owner: "key-b", Limit: 2}, []int{5, 4}},
		{"owner and run", types.ExecutionFilter{Owner: "key-a", RunID: "mine-1"}, []int{6, 1}},
		{"owner of another's run", types.ExecutionFilter{Owner: "key-a", RunID: "theirs"}, nil},
		{"no such owner", types.ExecutionFilter{Owner: "key-z"}, nil},
	} {
		got, err := s.ListExecutions(t.Context(), c.filter)
		if err != nil {
			t.Fatalf("%s: ListExecutions: %v", c.name, err)
		}
		var gotIDs, wantIDs []int64
		for _, row := range got {
			gotIDs = append(gotIDs, row.ID)
		}
		for _, n := range c.want {
			wantIDs = append(wantIDs, ids[n])
		}
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s: ids %v, want %v", c.name, gotIDs, wantIDs)
		}
	}
}
