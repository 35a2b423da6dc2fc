package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

func testQuotaRace(t *testing.T, s store.Store) {
	const n = 12
	for i := range 3 {
		ensureRun(t, s, fmt.Sprintf("run-%d", i))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	began, denied := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := newOperation(fmt.Sprintf("op-%d", i))
			op.RunID = fmt.Sprintf("run-%d", i%3)
			got, err := s.Admit(t.Context(), &store.Admission{RunID: op.RunID, Operation: op,
				Quotas: refundQuota("cust-1", 200), Now: at(time.Duration(i) * time.Millisecond)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case got.Denied != nil:
				denied++
				if d := got.Denied; d.Used != 400 || d.Limit != 500 || d.Amount != 200 || d.Quota != "refunds" || d.Key != "cust-1" {
					t.Errorf("denial %+v, want used 400 of 500", d)
				}
				if _, err := s.GetOperation(t.Context(), op.Key); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("a denied admission began %s", op.Key)
				}
			case got.Began:
				began++
			}
		}()
	}
	wg.Wait()
	if began != 2 || denied != n-2 {
		t.Fatalf("began %d, denied %d; want 2 and %d", began, denied, n-2)
	}
	use, err := s.QuotaUsage(t.Context(), at(time.Second), map[string]time.Duration{"refunds": time.Hour})
	if err != nil || len(use) != 1 || use[0].Used != 400 || use[0].Reservations != 2 {
		t.Fatalf("QuotaUsage = %+v, %v; want 400 in 2 reservations", use, err)
	}
}

func testQuotaRelease(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	for i, amount := range []int64{300, 200} {
		got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(fmt.Sprintf("op-%d", i)),
			Quotas: refundQuota("cust-1", amount), Now: at(0)})
		if err != nil || !got.Began {
			t.Fatalf("admit %d: %+v, %v", i, got, err)
		}
	}
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 100), Now: at(0)})
	if err != nil || got.Denied == nil {
		t.Fatalf("over the limit: %+v, %v; want denied", got, err)
	}
	// op-0 did nothing (refused downstream): its 300 are free again.
	settle(t, s, "run-1", "op-0", "", "")
	got, err = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 300), Now: at(0)})
	if err != nil || !got.Began {
		t.Fatalf("after the release: %+v, %v; want began", got, err)
	}
}

func testQuotaKept(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	for i := range 2 {
		if got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(fmt.Sprintf("op-%d", i)),
			Quotas: refundQuota("cust-1", 250), Now: at(0)}); err != nil || !got.Began {
			t.Fatalf("admit %d: %+v, %v", i, got, err)
		}
	}
	settle(t, s, "run-1", "op-0", types.OpCompleted, "")
	settle(t, s, "run-1", "op-1", types.OpUnknown, "")
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 1), Now: at(time.Minute)})
	if err != nil || got.Denied == nil || got.Denied.Used != 500 {
		t.Fatalf("after completed and unknown: %+v, %v; want denied with 500 used", got, err)
	}
}

func testQuotaWindow(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	for i, d := range []time.Duration{0, 10 * time.Minute} {
		if got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(fmt.Sprintf("op-%d", i)),
			Quotas: refundQuota("cust-1", 250), Now: at(d)}); err != nil || !got.Began {
			t.Fatalf("admit %d: %+v, %v", i, got, err)
		}
	}
	// At 59m the window holds both: 300 frees when the first expires, at 1h.
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 250), Now: at(59 * time.Minute)})
	if err != nil || got.Denied == nil {
		t.Fatalf("inside the window: %+v, %v; want denied", got, err)
	}
	checkTime(t, "FreesAt", got.Denied.FreesAt, at(time.Hour))
	// 500 fits only once both have expired, at 1h10m; 600 never does.
	got, _ = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 500), Now: at(59 * time.Minute)})
	if got == nil || got.Denied == nil {
		t.Fatal("500 with 500 used was not denied")
	}
	checkTime(t, "FreesAt of 500", got.Denied.FreesAt, at(70*time.Minute))
	got, _ = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 600), Now: at(59 * time.Minute)})
	if got == nil || got.Denied == nil || !got.Denied.FreesAt.IsZero() {
		t.Fatalf("600 over a limit of 500: %+v, want denied, never freeing", got)
	}
	// Exactly one window after the first reservation it no longer counts.
	got, err = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-2"), Quotas: refundQuota("cust-1", 250), Now: at(time.Hour)})
	if err != nil || !got.Began {
		t.Fatalf("after the first expired: %+v, %v; want began", got, err)
	}
	use, err := s.QuotaUsage(t.Context(), at(time.Hour), map[string]time.Duration{"refunds": time.Hour})
	if err != nil || len(use) != 1 || use[0].Used != 500 || use[0].Reservations != 2 {
		t.Fatalf("QuotaUsage = %+v, %v; want 500 in 2", use, err)
	}
	checkTime(t, "Oldest", use[0].Oldest, at(10*time.Minute))
	if use, _ := s.QuotaUsage(t.Context(), at(time.Hour), map[string]time.Duration{}); len(use) != 0 {
		t.Errorf("a quota without a window was listed: %+v", use)
	}
}

func testQuotaRepeat(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	if got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-1"), Quotas: refundQuota("cust-1", 300), Now: at(0)}); err != nil || !got.Began {
		t.Fatalf("admit: %+v, %v", got, err)
	}
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-1"), Quotas: refundQuota("cust-1", 300), Now: at(0)})
	if err != nil || got.Began || got.Existing == nil || got.Denied != nil {
		t.Fatalf("repeat: %+v, %v; want the existing operation, not a denial", got, err)
	}
	use, _ := s.QuotaUsage(t.Context(), at(0), map[string]time.Duration{"refunds": time.Hour})
	if len(use) != 1 || use[0].Used != 300 {
		t.Fatalf("QuotaUsage = %+v; want 300 (the repeat reserved nothing)", use)
	}
}

func testQuotaKeys(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	for i, key := range []string{"cust-1", "cust-2"} {
		if got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation(fmt.Sprintf("op-%d", i)),
			Quotas: refundQuota(key, 500), Now: at(0)}); err != nil || !got.Began {
			t.Fatalf("%s: %+v, %v", key, got, err)
		}
	}
	// Two quotas on one call: the second refuses, and the first reserves
	// nothing either.
	claims := append(refundQuota("cust-3", 100), store.QuotaClaim{Quota: "refunds", Key: "cust-1", Amount: 1, Limit: 500, Window: time.Hour})
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-3"), Quotas: claims, Now: at(0)})
	if err != nil || got.Denied == nil || got.Denied.Key != "cust-1" {
		t.Fatalf("two quotas: %+v, %v; want denied by cust-1", got, err)
	}
	use, _ := s.QuotaUsage(t.Context(), at(0), map[string]time.Duration{"refunds": time.Hour})
	if len(use) != 2 {
		t.Errorf("QuotaUsage = %+v; want cust-1 and cust-2 only", use)
	}
}

// refundQuota is a claim of amount on the quota refunds/cust-1 (500 per
// hour).
func refundQuota(key string, amount int64) []store.QuotaClaim {
	return []store.QuotaClaim{{Quota: "refunds", Key: key, Amount: amount, Limit: 500, Window: time.Hour}}
}
