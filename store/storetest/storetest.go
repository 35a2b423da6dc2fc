// Package storetest is the conformance suite of store.Store: every backend
// runs it from its own tests and must pass all of it.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
//	}
//
// The suite checks the documented semantics of every method of store.Store,
// including the concurrent ones (one winner of a BeginOperation race,
// distinct step numbers) and the all-or-nothing Commit.
package storetest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

// base is the fixed instant the suite's timestamps are built from.
var base = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// at returns base moved by d.
func at(d time.Duration) time.Time { return base.Add(d) }

// Run runs the conformance suite. open returns a fresh, empty store for one
// subtest and arranges for it to be closed when t ends; that Close may
// answer store.ErrClosed, because some subtests close the store themselves.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		cases []testCase
	}{
		{"Runs", runCases},
		{"AdmitStep", admitCases},
		{"Operations", operationCases},
		{"Commit", commitCases},
		{"ListExecutions", listExecutionCases},
		{"Prune", pruneCases},
		{"Stats", statsCases},
		{"Approvals", approvalCases},
		{"AdmitAndBegin", admitAndBeginCases},
		{"Fencer", fenceCases},
		{"Lifecycle", lifecycleCases},
		{"Limits", limitCases},
		{"ListRuns", listRunCases},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.cases {
				t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
			}
		})
	}
}

// testCase is one subtest of the suite, given a fresh store.
type testCase struct {
	name string
	test func(t *testing.T, s store.Store)
}

// sameJSON reports whether a and b hold the same JSON value, numbers
// compared by their exact text (no float64 on the way), whitespace ignored.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	va, erra := decodeExact(a)
	vb, errb := decodeExact(b)
	if erra != nil || errb != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// decodeExact decodes raw with numbers kept as json.Number.
func decodeExact(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// mustJSON marshals v or fails the test.
func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return raw
}

// sameTime compares instants, ignoring location and monotonic readings.
func sameTime(a, b time.Time) bool { return a.Equal(b) }

// checkTime fails the test when got and want are different instants.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !sameTime(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// checkJSON fails the test when got and want are different JSON values.
func checkJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !sameJSON(got, want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}
