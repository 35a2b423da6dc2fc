package storetest

import (
	"testing"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var fenceCases = []testCase{
	{"OwnFenceHoldsAndIsNeverTakenOver", testOwnFence},
}

// fencer returns s as a store.Fencer, or skips: stores of one process
// (memory, SQLite) are not.
func fencer(t *testing.T, s store.Store) store.Fencer {
	t.Helper()
	f, ok := store.As[store.Fencer](s)
	if !ok {
		t.Skip("this store serves one process: it has no liveness")
	}
	return f
}

// A fresh store is live: its fence holds, operations begun under its owner
// id are never taken over by itself, and they stay started.
func testOwnFence(t *testing.T, s store.Store) {
	f := fencer(t, s)
	fence, err := f.Fence()
	if err != nil || fence.Owner == "" {
		t.Fatalf("Fence = %+v, %v; want an owner id", fence, err)
	}
	if !f.Holds(fence) {
		t.Fatal("the fence just given does not hold")
	}
	if f.Holds(store.Fence{Owner: fence.Owner + "-other", Gen: fence.Gen + 1}) {
		t.Error("a fence of another owner id and generation holds")
	}
	op := newOperation("op-1")
	op.Owner = fence.Owner
	if _, began, err := s.BeginOperation(t.Context(), op); err != nil || !began {
		t.Fatalf("BeginOperation = %v, %v", began, err)
	}
	for range 3 {
		if gone, err := f.TakeOver(t.Context(), fence.Owner); gone || err != nil {
			t.Fatalf("TakeOver of the store's own owner id = %v, %v; want false", gone, err)
		}
	}
	if got := getOperation(t, s, "op-1"); got.Status != types.OpStarted {
		t.Errorf("operation is %s, want started", got.Status)
	}
}
