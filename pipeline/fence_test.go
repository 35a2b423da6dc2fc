package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// fencedStore is a memory store with a scripted liveness (store.Fencer):
// whether Fence answers, how many Holds answer true, and which owners
// TakeOver finds gone.
type fencedStore struct {
	store.Store
	mu         sync.Mutex
	live       bool
	holds      int // Holds calls still answered true (negative: always)
	gone       map[string]bool
	takeOvers  int
	fenceOwner string
}

// Unwrap lets the pipeline find the wrapped store's Limiter.
func (s *fencedStore) Unwrap() store.Store { return s.Store }

func (s *fencedStore) Fence() (store.Fence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live {
		return store.Fence{}, store.ErrNotLive
	}
	return store.Fence{Owner: s.fenceOwner, Gen: 1}, nil
}

func (s *fencedStore) Holds(f store.Fence) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == 0 {
		return false
	}
	if s.holds > 0 {
		s.holds--
	}
	return true
}

func (s *fencedStore) TakeOver(ctx context.Context, owner string) (bool, error) {
	s.mu.Lock()
	gone := s.gone[owner]
	if gone {
		s.takeOvers++
	}
	s.mu.Unlock()
	if !gone {
		return false, nil
	}
	_, err := s.Store.AbandonOwner(ctx, owner)
	return err == nil, err
}

// A write is begun only under a confirmed liveness, sent only while it
// still holds, and a waiter surfaces an operation of a fenced-off owner
// at once instead of waiting for its lease.
func TestFencing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		live      bool
		holds     int
		deadOwner bool // the call's operation is already started by a dead, fenced owner
		want      types.Code
		wantSent  int
		wantOp    types.OpStatus // "" : no record
		wantOwner string
		unsettled bool // the run's state keeps refunded_paise 0 though the call succeeded
	}{
		{name: "live", live: true, holds: -1, want: types.CodeOK, wantSent: 1, wantOp: types.OpCompleted, wantOwner: "me/1"},
		{name: "not live at admission", live: false, holds: -1, want: types.CodeStoreUnavailable},
		{name: "liveness lost before the send", live: true, holds: 0, want: types.CodeStoreUnavailable},
		{name: "owner taken over", live: true, holds: -1, deadOwner: true, want: types.CodeUnknownOutcome, wantOp: types.OpUnknown, wantOwner: "me/1"},
		// The answer comes after the liveness lapsed: the caller gets it,
		// but neither the ledger nor the state is settled (others may
		// have taken the operation over and settle it themselves).
		{name: "liveness lost after the send", live: true, holds: 1, want: types.CodeOK, wantSent: 1, wantOp: types.OpStarted, wantOwner: "me/1", unsettled: true},
		// The claim's verify ends after the liveness lapsed: nothing is
		// settled (the claim may be another replica's by now).
		{name: "liveness lost while verifying", live: true, holds: 0, deadOwner: true, want: types.CodeUnknownOutcome, wantOp: types.OpStarted, wantOwner: "me/1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pay := sim.NewPayments(sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
			srv := httptest.NewServer(pay)
			defer srv.Close()
			clk := clock.NewFake(time.Date(2026, 11, 30, 11, 4, 2, 0, time.UTC))
			st := &fencedStore{Store: memory.NewWithClock(clk.Now), live: tc.live, holds: tc.holds,
				gone: map[string]bool{"dead/7": true}, fenceOwner: "me/1"}
			// A long deadline: a waiter that waited for the lease would
			// answer duplicate_in_flight only after it.
			gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: refundsConfig(srv.URL, 1, false), Store: st,
				Clock: clk, Rand: clock.FixedRand(0.5), Logger: slog.New(slog.DiscardHandler), Owner: "me"})
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
			key := fmt.Sprintf("refund:ORD-4471:1000:%s", run.ID)
			if tc.deadOwner {
				op := &types.Operation{Key: key, Status: types.OpStarted, Owner: "dead/7", RunID: run.ID, Tool: "issue_refund",
					LeaseUntil: clk.Now().Add(time.Hour)}
				// The args hash must be the call's: take it from a twin
				// record begun by a first call, then hand it to the dead owner.
				st.mu.Lock()
				st.live, st.holds = true, 0
				st.mu.Unlock()
				if res, err := gw.Call(t.Context(), run.ID, "issue_refund", refundArgs(1000)); err != nil || res.Code() != types.CodeStoreUnavailable {
					t.Fatalf("fenced first call = %v, %v", res, err)
				}
				st.mu.Lock()
				st.live, st.holds = tc.live, tc.holds
				st.mu.Unlock()
				hash := lastArgsHash(t, gw)
				op.ArgsHash = hash
				if _, began, err := st.BeginOperation(t.Context(), op); err != nil || !began {
					t.Fatalf("begin the dead owner's operation = %v, %v", began, err)
				}
			}
			res, err := gw.Call(t.Context(), run.ID, "issue_refund", refundArgs(1000))
			if err != nil {
				t.Fatal(err)
			}
			if res.Code() != tc.want {
				t.Fatalf("code %s (%s), want %s", res.Code(), res.Observation, tc.want)
			}
			if c := pay.Counts(); c.Requests != tc.wantSent {
				t.Errorf("the provider got %d refund requests, want %d", c.Requests, tc.wantSent)
			}
			op, err := st.GetOperation(t.Context(), key)
			switch {
			case tc.wantOp == "" && !errors.Is(err, store.ErrNotFound):
				t.Errorf("ledger: %+v, %v; want no record (nothing was sent)", op, err)
			case tc.wantOp != "" && (err != nil || op.Status != tc.wantOp || op.Owner != tc.wantOwner):
				t.Errorf("ledger: %+v, %v; want %s owned by %s", op, err, tc.wantOp, tc.wantOwner)
			}
			if r, err := st.GetRun(t.Context(), run.ID); err != nil {
				t.Fatal(err)
			} else if applied := refunded(t, r.State) != 0; applied != (tc.want == types.CodeOK && !tc.unsettled) {
				t.Errorf("run state %s after %s", r.State, res.Code())
			}
			if tc.deadOwner && st.takeOvers == 0 {
				t.Error("the dead owner was never taken over")
			}
		})
	}
}

// lastArgsHash is the args hash of the newest execution row.
func lastArgsHash(t *testing.T, gw *toolgate.Gateway) string {
	t.Helper()
	rows, err := gw.Store().ListExecutions(t.Context(), types.ExecutionFilter{Limit: 1})
	if err != nil || len(rows) == 0 || rows[0].ArgsHash == "" {
		t.Fatalf("no execution row with an args hash: %v %v", rows, err)
	}
	return rows[0].ArgsHash
}

// refunded is the state's refunded_paise.
func refunded(t *testing.T, state json.RawMessage) int64 {
	t.Helper()
	var st struct {
		Refunded int64 `json:"refunded_paise"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatalf("state %s: %v", state, err)
	}
	return st.Refunded
}
