package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var operationCases = []testCase{
	{"BeginFirst", testBeginFirst},
	{"BeginExisting", testBeginExisting},
	{"BeginAlwaysStarted", testBeginAlwaysStarted},
	{"BeginConcurrent", testBeginConcurrent},
	{"GetNotFound", testGetOperationNotFound},
	{"ClaimOnlyUnknown", testClaimOnlyUnknown},
	{"ClaimNotFound", testClaimNotFound},
	{"ClaimConcurrent", testClaimConcurrent},
	{"ExpireLeases", testExpireLeases},
	{"AbandonOwner", testAbandonOwner},
	{"ListByStatus", testListOperations},
}

// newOperation returns a started operation of run-1 owned by owner-a, its
// lease ending a minute after base.
func newOperation(key string) *types.Operation {
	return &types.Operation{
		Key:        key,
		ArgsHash:   "sha256:" + key,
		Args:       json.RawMessage(`{"amount":9007199254740993,"order_id":"` + key + `"}`),
		RunID:      "run-1",
		Tool:       "refund",
		Status:     types.OpStarted,
		Owner:      "owner-a",
		LeaseUntil: at(time.Minute),
		CreatedAt:  at(0),
		UpdatedAt:  at(0),
	}
}

// begin records op, which must be new, or fails the test.
func begin(t *testing.T, s store.Store, op *types.Operation) {
	t.Helper()
	existing, began, err := s.BeginOperation(t.Context(), op)
	if err != nil || !began || existing != nil {
		t.Fatalf("BeginOperation(%q) = %v, %v, %v; want nil, true, nil", op.Key, existing, began, err)
	}
}

// getOperation reads an operation or fails the test.
func getOperation(t *testing.T, s store.Store, key string) *types.Operation {
	t.Helper()
	op, err := s.GetOperation(t.Context(), key)
	if err != nil {
		t.Fatalf("GetOperation(%q): %v", key, err)
	}
	return op
}

// checkStatus fails the test unless the operation is in status want.
func checkStatus(t *testing.T, s store.Store, key string, want types.OpStatus) {
	t.Helper()
	if got := getOperation(t, s, key).Status; got != want {
		t.Errorf("operation %q is %s, want %s", key, got, want)
	}
}

// makeUnknown begins an operation and expires its lease.
func makeUnknown(t *testing.T, s store.Store, key string) {
	t.Helper()
	op := newOperation(key)
	op.LeaseUntil = at(-time.Hour)
	begin(t, s, op)
	if _, err := s.ExpireLeases(t.Context(), at(0)); err != nil {
		t.Fatalf("ExpireLeases: %v", err)
	}
	checkStatus(t, s, key, types.OpUnknown)
}

func testBeginFirst(t *testing.T, s store.Store) {
	want := newOperation("op-1")
	begin(t, s, want)
	got := getOperation(t, s, "op-1")
	if got.Key != want.Key || got.ArgsHash != want.ArgsHash || got.RunID != want.RunID ||
		got.Tool != want.Tool || got.Owner != want.Owner || got.Status != types.OpStarted {
		t.Errorf("GetOperation = %+v, want %+v", got, want)
	}
	checkTime(t, "lease_until", got.LeaseUntil, want.LeaseUntil)
	checkJSON(t, "operation args", got.Args, want.Args)
	checkTime(t, "created_at", got.CreatedAt, want.CreatedAt)
	if len(got.Result) != 0 || !got.CompletedAt.IsZero() {
		t.Errorf("started operation has result %s, completed_at %v", got.Result, got.CompletedAt)
	}
}

func testBeginExisting(t *testing.T, s store.Store) {
	begin(t, s, newOperation("op-1"))
	other := newOperation("op-1")
	other.ArgsHash = "sha256:different-arguments"
	other.Owner = "owner-b"
	existing, began, err := s.BeginOperation(t.Context(), other)
	if err != nil || began {
		t.Fatalf("second BeginOperation = began %v, %v; want false, nil", began, err)
	}
	if existing == nil {
		t.Fatal("second BeginOperation returned no existing record")
	}
	// The caller compares hashes to detect an idempotency conflict: the
	// existing hash must come back unchanged.
	if existing.ArgsHash != "sha256:op-1" || existing.Owner != "owner-a" || existing.Status != types.OpStarted {
		t.Errorf("existing = hash %q owner %q status %s; want the first record's", existing.ArgsHash, existing.Owner, existing.Status)
	}
	if got := getOperation(t, s, "op-1"); got.ArgsHash != "sha256:op-1" || got.Owner != "owner-a" {
		t.Errorf("record after a second Begin = hash %q owner %q, want unchanged", got.ArgsHash, got.Owner)
	}
}

func testBeginAlwaysStarted(t *testing.T, s store.Store) {
	op := newOperation("op-1")
	op.Status = types.OpCompleted
	begin(t, s, op)
	checkStatus(t, s, "op-1", types.OpStarted)
}

func testBeginConcurrent(t *testing.T, s store.Store) {
	const n = 50
	began := make([]bool, n)
	existing := make([]*types.Operation, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			op := newOperation("op-race")
			op.ArgsHash = fmt.Sprintf("hash-%d", i)
			<-start
			existing[i], began[i], errs[i] = s.BeginOperation(t.Context(), op)
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("BeginOperation: %v", errs[i])
		}
		if began[i] {
			if winner >= 0 {
				t.Fatalf("callers %d and %d both began the same key", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no caller began the key")
	}
	winnerHash := fmt.Sprintf("hash-%d", winner)
	for i := range n {
		if i != winner && (existing[i] == nil || existing[i].ArgsHash != winnerHash) {
			t.Fatalf("loser %d saw %+v, want the winner's record (hash %s)", i, existing[i], winnerHash)
		}
	}
	started, err := s.ListOperations(t.Context(), types.OpStarted, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || started[0].ArgsHash != winnerHash {
		t.Fatalf("started records = %+v, want one with hash %s", started, winnerHash)
	}
}

func testGetOperationNotFound(t *testing.T, s store.Store) {
	if _, err := s.GetOperation(t.Context(), "no-such-key"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetOperation(unknown) = %v, want ErrNotFound", err)
	}
}

func testClaimOnlyUnknown(t *testing.T, s store.Store) {
	ctx := t.Context()
	makeUnknown(t, s, "op-unknown")
	lease := at(5 * time.Minute)
	if ok, err := s.ClaimOperation(ctx, "op-unknown", "owner-b", lease); err != nil || !ok {
		t.Fatalf("ClaimOperation(unknown) = %v, %v; want true, nil", ok, err)
	}
	got := getOperation(t, s, "op-unknown")
	if got.Status != types.OpStarted || got.Owner != "owner-b" {
		t.Errorf("claimed operation = status %s owner %q, want started owner-b", got.Status, got.Owner)
	}
	checkTime(t, "claimed lease_until", got.LeaseUntil, lease)

	// Started now: a second claim fails and changes nothing.
	if ok, err := s.ClaimOperation(ctx, "op-unknown", "owner-c", at(time.Hour)); err != nil || ok {
		t.Fatalf("ClaimOperation(started) = %v, %v; want false, nil", ok, err)
	}
	if got := getOperation(t, s, "op-unknown"); got.Owner != "owner-b" {
		t.Errorf("owner after a refused claim = %q, want owner-b", got.Owner)
	}

	begin(t, s, newOperation("op-started"))
	if ok, err := s.ClaimOperation(ctx, "op-started", "owner-b", lease); err != nil || ok {
		t.Fatalf("ClaimOperation(started) = %v, %v; want false, nil", ok, err)
	}
	completeOperation(t, s, "op-done")
	if ok, err := s.ClaimOperation(ctx, "op-done", "owner-b", lease); err != nil || ok {
		t.Fatalf("ClaimOperation(completed) = %v, %v; want false, nil", ok, err)
	}
	checkStatus(t, s, "op-done", types.OpCompleted)
}

func testClaimNotFound(t *testing.T, s store.Store) {
	_, err := s.ClaimOperation(t.Context(), "no-such-key", "owner-b", at(time.Hour))
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ClaimOperation(unknown key) = %v, want ErrNotFound", err)
	}
}

func testClaimConcurrent(t *testing.T, s store.Store) {
	makeUnknown(t, s, "op-1")
	const n = 20
	claimed := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			claimed[i], errs[i] = s.ClaimOperation(t.Context(), "op-1", fmt.Sprintf("owner-%d", i), at(time.Hour))
		})
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("ClaimOperation: %v", errs[i])
		}
		if claimed[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d concurrent claims succeeded, want exactly 1", winners)
	}
}

func testExpireLeases(t *testing.T, s store.Store) {
	ctx := t.Context()
	expired := newOperation("op-expired")
	expired.LeaseUntil = at(-time.Minute)
	begin(t, s, expired)
	live := newOperation("op-live")
	live.LeaseUntil = at(time.Minute)
	begin(t, s, live)
	completeOperation(t, s, "op-done")

	n, err := s.ExpireLeases(ctx, at(0))
	if err != nil || n != 1 {
		t.Fatalf("ExpireLeases = %d, %v; want 1, nil", n, err)
	}
	checkStatus(t, s, "op-expired", types.OpUnknown)
	checkStatus(t, s, "op-live", types.OpStarted)
	checkStatus(t, s, "op-done", types.OpCompleted)
	if got := getOperation(t, s, "op-expired"); got.ArgsHash != expired.ArgsHash || got.Owner != expired.Owner {
		t.Errorf("expired record = %+v, want hash and owner kept", got)
	}

	if n, err := s.ExpireLeases(ctx, at(0)); err != nil || n != 0 {
		t.Fatalf("second ExpireLeases = %d, %v; want 0, nil", n, err)
	}
	if n, err := s.ExpireLeases(ctx, at(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("ExpireLeases later = %d, %v; want 1, nil", n, err)
	}
	checkStatus(t, s, "op-live", types.OpUnknown)
}

func testAbandonOwner(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, key := range []string{"a-1", "a-2"} {
		begin(t, s, newOperation(key))
	}
	b := newOperation("b-1")
	b.Owner = "owner-b"
	begin(t, s, b)
	completeOperation(t, s, "a-done")

	if n, err := s.AbandonOwner(ctx, "owner-a"); err != nil || n != 2 {
		t.Fatalf("AbandonOwner(owner-a) = %d, %v; want 2, nil", n, err)
	}
	checkStatus(t, s, "a-1", types.OpUnknown)
	checkStatus(t, s, "a-2", types.OpUnknown)
	checkStatus(t, s, "b-1", types.OpStarted)
	checkStatus(t, s, "a-done", types.OpCompleted)

	if n, err := s.AbandonOwner(ctx, ""); err != nil || n != 1 {
		t.Fatalf("AbandonOwner(everyone) = %d, %v; want 1, nil", n, err)
	}
	checkStatus(t, s, "b-1", types.OpUnknown)
	checkStatus(t, s, "a-done", types.OpCompleted)
	if n, err := s.AbandonOwner(ctx, ""); err != nil || n != 0 {
		t.Fatalf("AbandonOwner again = %d, %v; want 0, nil", n, err)
	}
}

func testListOperations(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i, key := range []string{"op-c", "op-a", "op-b"} {
		op := newOperation(key)
		// Created in the order a, b, c though begun in the order c, a, b.
		op.CreatedAt = at(time.Duration([]int{3, 1, 2}[i]) * time.Second)
		op.UpdatedAt = op.CreatedAt
		begin(t, s, op)
	}
	makeUnknown(t, s, "op-lost")

	keys := func(ops []types.Operation) []string {
		var out []string
		for _, op := range ops {
			out = append(out, op.Key)
		}
		return out
	}
	cases := []struct {
		status types.OpStatus
		limit  int
		want   []string
	}{
		{types.OpStarted, 0, []string{"op-a", "op-b", "op-c"}},
		{types.OpStarted, 2, []string{"op-a", "op-b"}},
		{types.OpUnknown, 0, []string{"op-lost"}},
		{types.OpCompleted, 0, nil},
	}
	for _, c := range cases {
		got, err := s.ListOperations(ctx, c.status, c.limit)
		if err != nil {
			t.Fatalf("ListOperations(%s, %d): %v", c.status, c.limit, err)
		}
		if !slices.Equal(keys(got), c.want) {
			t.Errorf("ListOperations(%s, %d) = %v, want %v", c.status, c.limit, keys(got), c.want)
		}
	}
}
