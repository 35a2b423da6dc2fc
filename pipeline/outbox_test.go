package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/internal/sim"
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
	pay := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
	pay.HonourKeys = true
	srv := httptest.NewServer(pay)
	defer srv.Close()
	clk := clock.NewFake(time.Date(2026, 11, 30, 11, 4, 2, 0, time.UTC))
	st := &commitDownStore{Store: memory.NewWithClock(clk.Now)}
	gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: refundsConfig(srv.URL, 20, true), Store: st,
		Clock: clk, Rand: clock.FixedRand(0.5), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(t.Context(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42",
		Permissions: []string{"refunds:write"}, Limits: map[string]json.Number{"max_refund_paise": "500000"}},
		State: json.RawMessage(`{"refunded_paise": 0}`)})
	if err != nil {
		t.Fatal(err)
	}
	call := func() *types.Result {
		t.Helper()
		res, err := gw.Call(t.Context(), run.ID, "issue_refund", refundArgs(1000))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

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
	rows, err := gw.History(t.Context(), run.ID)
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
