package storetest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

// testQuotaOverflow: an amount that would carry the use past int64 is
// refused, not wrapped to a negative use that lets everything through
// (issue 27 #1), and the store still answers for the key afterwards.
func testQuotaOverflow(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	claim := func(amount int64) []store.QuotaClaim {
		return []store.QuotaClaim{{Quota: "refunds", Key: "alice", Amount: amount, Limit: 1_000_000, Window: 24 * time.Hour}}
	}
	admit := func(op string, amount int64) *store.Admitted {
		t.Helper()
		got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(op), Quotas: claim(amount), Now: at(0)})
		if err != nil {
			t.Fatalf("admit %s of %d: %v", op, amount, err)
		}
		return got
	}
	if got := admit("op-1", 1); !got.Began {
		t.Fatalf("1 of 1,000,000: %+v, want began", got)
	}
	got := admit("op-2", math.MaxInt64)
	if d := got.Denied; d == nil || d.Used != 1 || d.Amount != math.MaxInt64 || !d.FreesAt.IsZero() || got.Began {
		t.Fatalf("2^63-1 after 1: %+v (denied %+v), want denied with 1 used, never freeing", got, got.Denied)
	}
	if got := admit("op-3", 999_999); !got.Began {
		t.Fatalf("999,999 after the refusal: %+v, want began (the refusal reserved nothing)", got)
	}
	use, err := s.QuotaUsage(t.Context(), at(time.Second), map[string]time.Duration{"refunds": 24 * time.Hour})
	if err != nil || len(use) != 1 || use[0].Used != 1_000_000 || use[0].Reservations != 2 {
		t.Fatalf("QuotaUsage = %+v, %v; want 1,000,000 in 2 reservations", use, err)
	}
}

// testQuotaOverflowFrees: at a limit of 2^63-1, the search for when a
// refused claim fits must not overflow either (used - freed + amount ran
// past int64 in SQL: "integer overflow" on SQLite, "bigint out of range"
// on PostgreSQL).
func testQuotaOverflowFrees(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	for i, amount := range []int64{1, math.MaxInt64 - 1} {
		got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(fmt.Sprintf("op-%d", i)),
			Quotas: []store.QuotaClaim{{Quota: "q", Key: "k", Amount: amount, Limit: math.MaxInt64, Window: time.Hour}}, Now: at(time.Duration(i) * time.Minute)})
		if err != nil || !got.Began {
			t.Fatalf("admit %d: %+v, %v", amount, got, err)
		}
	}
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"),
		Quotas: []store.QuotaClaim{{Quota: "q", Key: "k", Amount: math.MaxInt64, Limit: math.MaxInt64, Window: time.Hour}}, Now: at(2 * time.Minute)})
	if err != nil || got.Denied == nil || got.Denied.Used != math.MaxInt64 {
		t.Fatalf("2^63-1 on a full quota: %+v, %v; want denied with 2^63-1 used", got, err)
	}
	checkTime(t, "FreesAt", got.Denied.FreesAt, at(time.Minute+time.Hour))
}
