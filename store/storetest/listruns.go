package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var listRunCases = []testCase{
	{"PagesPerKey", testListRunsPages},
	{"Filters", testListRunsFilters},
}

// addRun creates the run KEY/ID (ID alone without a key) for principal,
// created at base + min minutes.
func addRun(t *testing.T, s store.Store, key, id, principal string, min int) string {
	t.Helper()
	run := newRun(types.ScopedRunID(key, id))
	run.Owner, run.Principal.ID, run.MaxSteps = key, principal, 0
	run.CreatedAt, run.UpdatedAt = at(time.Duration(min)*time.Minute), at(time.Duration(min)*time.Minute)
	createRun(t, s, run)
	return run.ID
}

// listIDs lists f and returns the stored ids, in order.
func listIDs(t *testing.T, s store.RunLister, f store.RunFilter) []string {
	t.Helper()
	runs, err := s.ListRuns(t.Context(), f)
	if err != nil {
		t.Fatalf("ListRuns(%+v): %v", f, err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// A key pages through its own runs, newest first, two at a time, and sees
// each exactly once; runs created at the same instant are ordered by id;
// another key's runs never appear; no owner filter lists them all.
func testListRunsPages(t *testing.T, s store.Store) {
	var want []string
	for i, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		want = append(want, addRun(t, s, "agent", id, "cust_1", i+1))
		addRun(t, s, "other", id, "cust_1", i+1)
	}
	want = append(want, addRun(t, s, "agent", "t1", "cust_1", 9), addRun(t, s, "agent", "t2", "cust_1", 9))
	// Newest first: t2 and t1 (same instant, greater id first), then p5 ... p1.
	want = []string{want[6], want[5], want[4], want[3], want[2], want[1], want[0]}

	var got []string
	f := store.RunFilter{Owner: "agent", Limit: 2}
	for page := 0; page < 10; page++ {
		runs, err := s.ListRuns(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			got = append(got, r.ID)
			if r.Owner != "agent" || r.PublicID() == r.ID {
				t.Errorf("run %q: owner %q, public id %q", r.ID, r.Owner, r.PublicID())
			}
		}
		if len(runs) < 2 {
			break
		}
		pos := runs[len(runs)-1].Position()
		f.After = &pos
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages of agent's runs: %q, want %q", got, want)
	}
	if all := listIDs(t, s, store.RunFilter{}); len(all) != 12 {
		t.Errorf("no owner filter: %d runs %q, want 12", len(all), all)
	}
}

// Each filter keeps what it says, and the last call's tool and code come
// with each run.
func testListRunsFilters(t *testing.T, s store.Store) {
	a := addRun(t, s, "agent", "refund-1", "cust_42", 1)
	b := addRun(t, s, "agent", "Lookup_2", "cust_7", 2)
	c := addRun(t, s, "agent", "50%_off", "agent_x", 3)
	other := addRun(t, s, "other", "refund-9", "cust_42", 4)
	for _, call := range []struct {
		run, tool string
		code      types.Code
		min       int
	}{{a, "get_order", types.CodeOK, 5}, {a, "issue_refund", types.CodeTimeoutUnknownOutcome, 6},
		{b, "issue_refund", types.CodeOK, 7}, {b, "get_order", types.CodeRejected, 8}, {other, "issue_refund", types.CodeOK, 9}} {
		exec := newExecution(call.run, call.tool, at(time.Duration(call.min)*time.Minute))
		exec.Code, exec.OK = call.code, call.code == types.CodeOK
		commit(t, s, &store.Commit{Execution: exec})
	}
	cases := []struct {
		name string
		f    store.RunFilter
		want []string
	}{
		{"owner", store.RunFilter{Owner: "agent"}, []string{c, b, a}},
		{"principal", store.RunFilter{PrincipalID: "cust_42"}, []string{other, a}},
		{"tool", store.RunFilter{Owner: "agent", Tool: "issue_refund"}, []string{b, a}},
		{"code", store.RunFilter{Code: types.CodeOK}, []string{other, b, a}},
		{"tool and code on one call", store.RunFilter{Tool: "get_order", Code: types.CodeOK}, []string{a}},
		{"query: the run id, any case", store.RunFilter{Query: "LOOKUP"}, []string{b}},
		{"query: the principal", store.RunFilter{Query: "cust_7"}, []string{b}},
		{"query: not the key's name", store.RunFilter{Owner: "agent", Query: "agent"}, []string{c}},
		{"query: % and _ are literal", store.RunFilter{Query: "0%_"}, []string{c}},
		{"query: a lone % is literal", store.RunFilter{Query: "%"}, []string{c}},
		{"since", store.RunFilter{Since: at(2 * time.Minute)}, []string{other, c, b}},
		{"limit", store.RunFilter{Limit: 1}, []string{other}},
	}
	for _, tc := range cases {
		if got := listIDs(t, s, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	runs, err := s.ListRuns(t.Context(), store.RunFilter{Owner: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, r := range runs {
		last[r.PublicID()] = r.PrincipalID + " " + r.LastTool + " " + string(r.LastCode)
	}
	want := map[string]string{"refund-1": "cust_42 issue_refund timeout_unknown_outcome",
		"Lookup_2": "cust_7 get_order rejected", "50%_off": "agent_x  "}
	for id, w := range want {
		if last[id] != w {
			t.Errorf("run %s: principal, last tool and code %q, want %q", id, last[id], w)
		}
	}
}
