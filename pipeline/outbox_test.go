package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// commitDownStore is a memory store whose commits fail while down is set:
// the call's own records are not taken, everything before them is.
type commitDownStore struct {
	store.Store
	down atomic.Bool
}

var errCommitDown = errors.New("the store is not taking commits")

func (s *commitDownStore) Commit(ctx context.Context, c *store.Commit) error {
	if s.down.Load() {
		return errCommitDown
	}
	return s.Store.Commit(ctx, c)
}

// A repeat of a write whose first call's records are still kept (the store
// did not take them) waits for them before it is judged: while they are
// not written it answers store_unavailable within its deadline, sending
// nothing; once the outbox has written them it is judged against them.
// Without the wait it would be judged against a ledger that shows the
// operation still started (duplicate_in_flight).
func TestRepeatWaitsForKeptRecords(t *testing.T) {
	var st *commitDownStore
	b := setup(t, setupOpts{honourKeys: true, speed: 20, store: func(now func() time.Time) store.Store {
		st = &commitDownStore{Store: memory.NewWithClock(now)}
		return st
	}})
	pay := b.payments
	call := func() *types.Result { return b.call("issue_refund", refundArgs(1000)) }

	st.down.Store(true)
	defer st.down.Store(false) // before Close, which flushes the outbox
	// The refund is made; its answer says the outcome is not recorded.
	if first := call(); first.Code() != types.CodeUnknownOutcome || len(pay.Refunds()) != 1 {
		t.Fatalf("first call = %s (%+v), %d refunds; want unknown_outcome after one refund", first.Code(), first.Error, len(pay.Refunds()))
	}
	if again := call(); again.Code() != types.CodeStoreUnavailable {
		t.Fatalf("a repeat while the first call's records are kept = %s (%+v), want store_unavailable", again.Code(), again.Error)
	}

	// The kept records settle the operation unknown, as the first answer
	// said: the repeat re-sends it under its key, which the provider
	// honours.
	st.down.Store(false)
	if last := call(); last.Code() != types.CodeOK {
		t.Fatalf("a repeat once the store takes commits = %s (%+v), want ok", last.Code(), last.Error)
	}
	if n := len(pay.Refunds()); n != 1 {
		t.Errorf("refunds made = %d, want 1", n)
	}
	// Every answer is recorded in the end, in order: the kept ones by the
	// outbox, before the repeat that waited for them.
	rows, err := b.gw.History(t.Context(), b.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var codes []types.Code
	for _, r := range rows {
		codes = append(codes, r.Code)
	}
	if want := []types.Code{types.CodeUnknownOutcome, types.CodeStoreUnavailable, types.CodeOK}; !slices.Equal(codes, want) {
		t.Errorf("recorded codes = %v, want %v", codes, want)
	}
}
