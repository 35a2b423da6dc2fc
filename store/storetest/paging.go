package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// commitRows commits one row per code, row n (1..) finishing at base + n
// minutes on run r1, and returns the ids with ids[n] the id of row n.
func commitRows(t *testing.T, s store.Store, codes ...types.Code) []int64 {
	t.Helper()
	ensureRun(t, s, "r1")
	ids := make([]int64, len(codes)+1)
	for i, code := range codes {
		exec := newExecution("r1", "search", at(time.Duration(i+1)*time.Minute))
		exec.Code, exec.OK = code, code == types.CodeOK
		commit(t, s, &store.Commit{Execution: exec})
		ids[i+1] = exec.ID
	}
	return ids
}

// filterCase is one ListExecutions query and the row numbers it must give.
type filterCase struct {
	name   string
	filter types.ExecutionFilter
	want   []int
}

// checkFilters runs each case and compares the ids, in order.
func checkFilters(t *testing.T, s store.Store, ids []int64, cases []filterCase) {
	t.Helper()
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

func testListExecutionCodeAndUntil(t *testing.T, s store.Store) {
	ids := commitRows(t, s, types.CodeOK, types.CodeUpstreamError, types.CodeOK, types.CodeTimeout, types.CodeUpstreamError)
	checkFilters(t, s, ids, []filterCase{
		{"code", types.ExecutionFilter{Code: types.CodeUpstreamError}, []int{5, 2}},
		{"code ascending", types.ExecutionFilter{Code: types.CodeOK, Ascending: true}, []int{1, 3}},
		{"no such code", types.ExecutionFilter{Code: "nope"}, nil},
		{"until is exclusive", types.ExecutionFilter{Until: at(3 * time.Minute)}, []int{2, 1}},
		{"since and until", types.ExecutionFilter{Since: at(2 * time.Minute), Until: at(4 * time.Minute)}, []int{3, 2}},
		{"code in a window", types.ExecutionFilter{Code: types.CodeUpstreamError, Since: at(time.Minute), Until: at(5 * time.Minute)}, []int{2}},
		{"empty window", types.ExecutionFilter{Since: at(3 * time.Minute), Until: at(3 * time.Minute)}, nil},
	})
}

func testListExecutionCursors(t *testing.T, s store.Store) {
	ids := commitRows(t, s, types.CodeOK, types.CodeUpstreamError, types.CodeOK, types.CodeOK, types.CodeUpstreamError)
	checkFilters(t, s, ids, []filterCase{
		{"before", types.ExecutionFilter{BeforeID: ids[4]}, []int{3, 2, 1}},
		{"before with a limit", types.ExecutionFilter{BeforeID: ids[4], Limit: 2}, []int{3, 2}},
		{"before the first", types.ExecutionFilter{BeforeID: ids[1]}, nil},
		{"after ascending", types.ExecutionFilter{AfterID: ids[2], Ascending: true}, []int{3, 4, 5}},
		{"after, newest first", types.ExecutionFilter{AfterID: ids[2]}, []int{5, 4, 3}},
		{"after the last", types.ExecutionFilter{AfterID: ids[5]}, nil},
		{"between", types.ExecutionFilter{AfterID: ids[1], BeforeID: ids[5]}, []int{4, 3, 2}},
		{"before and code", types.ExecutionFilter{BeforeID: ids[5], Code: types.CodeUpstreamError}, []int{2}},
		{"before and run", types.ExecutionFilter{BeforeID: ids[3], RunID: "r1"}, []int{2, 1}},
	})
}

// Reading newest first a page at a time with BeforeID, while rows are
// committed between the pages, gives every row that was there at the start
// exactly once, and none of the new ones.
func testListExecutionPaging(t *testing.T, s store.Store) {
	ensureRun(t, s, "r1")
	want := map[int64]bool{}
	for i := range 25 {
		exec := newExecution("r1", "search", at(time.Duration(i)*time.Second))
		commit(t, s, &store.Commit{Execution: exec})
		want[exec.ID] = true
	}
	seen := map[int64]int{}
	var cursor int64
	for page := 0; ; page++ {
		rows, err := s.ListExecutions(t.Context(), types.ExecutionFilter{Limit: 10, BeforeID: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		for _, r := range rows {
			seen[r.ID]++
		}
		if len(rows) < 10 {
			break
		}
		cursor = rows[len(rows)-1].ID
		// Three new rows between the pages.
		for range 3 {
			commit(t, s, &store.Commit{Execution: newExecution("r1", "search", at(time.Hour))})
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("row %d read %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if !want[id] {
			t.Errorf("row %d (added while paging) read %d times", id, n)
		}
	}
}
