package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var limitCases = []testCase{
	{"WriterSlotIsExclusive", testWriterSlotExclusive},
	{"WriterSlotReleasedByCommit", testWriterSlotReleasedByCommit},
	{"WriterSlotLeaseEnds", testWriterSlotLease},
	{"WriterSlotAbandoned", testWriterSlotAbandoned},
	{"WriterSlotRace", testWriterSlotRace},
	{"WriterSlotWithoutOperation", testWriterSlotWithoutOperation},
	{"WriterSlotNotForRepeats", testWriterSlotRepeats},
	{"StepKept", testAdmitStepKept},
	{"WriterSlotShared", testWriterSlotShared},
	{"QuotaRaceNeverExceeds", testQuotaRace},
	{"QuotaReleasedWhenNothingHappened", testQuotaRelease},
	{"QuotaKeptOnCompletedAndUnknown", testQuotaKept},
	{"QuotaWindowSlides", testQuotaWindow},
	{"QuotaRepeatReservesNothing", testQuotaRepeat},
	{"QuotaKeysAreSeparate", testQuotaKeys},
	{"QuotaNeverOverflows", testQuotaOverflow},
	{"QuotaFreesNeverOverflows", testQuotaOverflowFrees},
}

// claim is a slot claim of holder, leased until lease.
func claim(holder string, lease time.Time) *store.WriterClaim {
	return &store.WriterClaim{Holder: holder, Owner: "owner-a", LeaseUntil: lease}
}

// settle commits a row for the run that settles op (status "" deletes
// it) and releases holder's slot.
func settle(t *testing.T, s store.Store, runID, op string, status types.OpStatus, holder string) {
	t.Helper()
	e := newExecution(runID, "refund", at(time.Second))
	commit(t, s, &store.Commit{Execution: e, Operation: &store.OperationUpdate{Key: op, Status: status, At: at(time.Second)},
		ReleaseWriter: holder})
}

func testWriterSlotExclusive(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Minute)),
		Operation: newOperation("op-1"), Now: at(0)})
	if err != nil || !got.Began || got.Step != 1 || got.Version != 0 {
		t.Fatalf("first admit: %+v, %v", got, err)
	}
	w, err := stateWriter(s, t.Context(), "run-1")
	if err != nil || w == nil || w.Holder != "h1" || w.Owner != "owner-a" {
		t.Fatalf("StateWriter = %+v, %v; want h1", w, err)
	}
	_, err = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(time.Minute)),
		Operation: newOperation("op-2"), Now: at(time.Second)})
	if !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("second admit: %v, want ErrWriterBusy", err)
	}
	// Nothing of the refused admission was written.
	if _, err := s.GetOperation(t.Context(), "op-2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("op-2 was begun by a refused admission: %v", err)
	}
	if run := getRun(t, s, "run-1"); run.Step != 1 {
		t.Errorf("step = %d after a refused admission, want 1", run.Step)
	}
	// A call that takes no slot is not held back.
	if got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Operation: newOperation("op-3"), Now: at(time.Second)}); err != nil || !got.Began {
		t.Errorf("admit without a slot: %+v, %v", got, err)
	}
	// Another run's slot is its own.
	ensureRun(t, s, "run-2")
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-2", Writer: claim("h3", at(time.Minute)), Now: at(time.Second)}); err != nil {
		t.Errorf("admit on another run: %v", err)
	}
}

func testWriterSlotReleasedByCommit(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Minute)),
		Operation: newOperation("op-1"), Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	// Another holder's release changes nothing.
	if err := s.ReleaseStateWriter(t.Context(), "run-1", "h2"); err != nil {
		t.Fatal(err)
	}
	if w, _ := stateWriter(s, t.Context(), "run-1"); w == nil {
		t.Fatal("the slot was released by a call that does not hold it")
	}
	settle(t, s, "run-1", "op-1", types.OpCompleted, "h1")
	if w, err := stateWriter(s, t.Context(), "run-1"); err != nil || w != nil {
		t.Fatalf("after the commit: %+v, %v; want a free slot", w, err)
	}
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(time.Minute)),
		Operation: newOperation("op-2"), Now: at(2 * time.Second)})
	if err != nil || !got.Began || got.Version != 1 {
		t.Fatalf("admit after the release: %+v, %v (want version 1: the commit moved it)", got, err)
	}
	if err := s.ReleaseStateWriter(t.Context(), "run-1", "h2"); err != nil {
		t.Fatal(err)
	}
	if w, _ := stateWriter(s, t.Context(), "run-1"); w != nil {
		t.Errorf("ReleaseStateWriter left %+v", w)
	}
}

func testWriterSlotLease(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Minute)), Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(2*time.Minute)), Now: at(time.Minute)}); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("at the lease's end: %v, want ErrWriterBusy", err)
	}
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(2*time.Minute)), Now: at(time.Minute + time.Millisecond)}); err != nil {
		t.Fatalf("after the lease: %v", err)
	}
	if w, _ := stateWriter(s, t.Context(), "run-1"); w == nil || w.Holder != "h2" {
		t.Errorf("holder = %+v, want h2", w)
	}
	// The presumed-dead holder's late release does not free h2's slot.
	commit(t, s, &store.Commit{Execution: newExecution("run-1", "refund", at(time.Minute)), ReleaseWriter: "h1"})
	if w, _ := stateWriter(s, t.Context(), "run-1"); w == nil || w.Holder != "h2" {
		t.Errorf("after h1's late commit: holder %+v, want h2", w)
	}
}

func testWriterSlotAbandoned(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Hour)), Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AbandonOwner(t.Context(), "owner-b"); err != nil {
		t.Fatal(err)
	}
	if w, _ := stateWriter(s, t.Context(), "run-1"); w == nil {
		t.Fatal("another owner's abandonment freed the slot")
	}
	if _, err := s.AbandonOwner(t.Context(), "owner-a"); err != nil {
		t.Fatal(err)
	}
	if w, err := stateWriter(s, t.Context(), "run-1"); err != nil || w != nil {
		t.Fatalf("after AbandonOwner: %+v, %v; want a free slot", w, err)
	}
}

func testWriterSlotRace(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	const n = 12
	var wg sync.WaitGroup
	won := make(chan string, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("h%d", i)
			_, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim(holder, at(time.Hour)),
				Operation: newOperation(fmt.Sprintf("op-%d", i)), Now: at(0)})
			switch {
			case err == nil:
				won <- holder
			case !errors.Is(err, store.ErrWriterBusy):
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(won)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var winners []string
	for h := range won {
		winners = append(winners, h)
	}
	if len(winners) != 1 {
		t.Fatalf("%d calls took the slot (%v), want 1", len(winners), winners)
	}
	if w, _ := stateWriter(s, t.Context(), "run-1"); w == nil || w.Holder != winners[0] {
		t.Errorf("holder = %+v, want %s", w, winners[0])
	}
	if run := getRun(t, s, "run-1"); run.Step != 1 {
		t.Errorf("step = %d, want 1 (only the winner took one)", run.Step)
	}
}

func testWriterSlotWithoutOperation(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Minute)), Now: at(0)})
	if err != nil || got.Step != 1 || got.Began || got.Existing != nil {
		t.Fatalf("admit: %+v, %v", got, err)
	}
	e := newExecution("run-1", "lookup", at(time.Second))
	commit(t, s, &store.Commit{Execution: e, NewState: []byte(`{"seen":1}`), ExpectVersion: 0, ReleaseWriter: "h1"})
	if w, _ := stateWriter(s, t.Context(), "run-1"); w != nil {
		t.Errorf("slot still held: %+v", w)
	}
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "no-such-run", Writer: claim("h1", at(time.Minute)), Now: at(0)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
}

func testWriterSlotRepeats(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	first, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Hour)), Operation: newOperation("op-1"), Now: at(0)})
	if err != nil || !first.Writer || !first.Began {
		t.Fatalf("first: %+v, %v", first, err)
	}
	// A repeat of the started operation waits for it, changing no state:
	// it is admitted beside the holder, without the slot.
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(time.Hour)), Operation: newOperation("op-1"), Now: at(0)})
	if err != nil || got.Writer || got.Began || got.Existing == nil || got.Existing.Status != types.OpStarted {
		t.Fatalf("repeat of a started operation: %+v, %v; want admitted without the slot", got, err)
	}
	// A new operation still finds the slot taken.
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h2", at(time.Hour)), Operation: newOperation("op-2"), Now: at(0)}); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("new operation: %v, want ErrWriterBusy", err)
	}
	settle(t, s, "run-1", "op-1", types.OpUnknown, "h1")
	// An unknown one may be verified and then change the state: it needs
	// the slot.
	got, err = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h3", at(time.Hour)), Operation: newOperation("op-1"), Now: at(0)})
	if err != nil || !got.Writer || got.Existing == nil || got.Existing.Status != types.OpUnknown {
		t.Fatalf("repeat of an unknown operation: %+v, %v; want the slot taken", got, err)
	}
	if _, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h4", at(time.Hour)), Operation: newOperation("op-1"), Now: at(0)}); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("second repeat of the unknown operation: %v, want ErrWriterBusy", err)
	}
}

func testAdmitStepKept(t *testing.T, s store.Store) {
	run := newRun("run-1")
	run.MaxSteps = 1
	createRun(t, s, run)
	got, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Hour)), Now: at(0)})
	if err != nil || got.Step != 1 {
		t.Fatalf("first: %+v, %v", got, err)
	}
	if err := s.ReleaseStateWriter(t.Context(), "run-1", "h1"); err != nil {
		t.Fatal(err)
	}
	// Admitted again with the step it has: no other is taken, so the
	// spent budget does not refuse it.
	got, err = s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: claim("h1", at(time.Hour)), Operation: newOperation("op-1"), Now: at(0), Step: 1})
	if err != nil || got.Step != 1 || !got.Began {
		t.Fatalf("with its step: %+v, %v", got, err)
	}
	if r := getRun(t, s, "run-1"); r.Step != 1 {
		t.Errorf("run step %d, want 1", r.Step)
	}
}

// stateWriter returns the run's one slot holder, or nil; more than one is
// an error (the cases that use it take exclusive claims).
func stateWriter(s store.Limiter, ctx context.Context, runID string) (*store.StateWriter, error) {
	ws, err := s.StateWriters(ctx, runID)
	switch {
	case err != nil:
		return nil, err
	case len(ws) == 0:
		return nil, nil
	case len(ws) > 1:
		return nil, fmt.Errorf("%d holders of the slot of %s: %+v", len(ws), runID, ws)
	}
	return &ws[0], nil
}

// shared is a shared slot claim of holder.
func shared(holder string, lease time.Time) *store.WriterClaim {
	c := claim(holder, lease)
	c.Shared = true
	return c
}

func testWriterSlotShared(t *testing.T, s store.Store) {
	ensureRun(t, s, "run-1")
	admit := func(c *store.WriterClaim, op string) error {
		_, err := s.Admit(t.Context(), &store.Admission{RunID: "run-1", Writer: c, Operation: newOperation(op), Now: at(0)})
		return err
	}
	// Calls that only update the state share the slot...
	if err := admit(shared("u1", at(time.Hour)), "op-1"); err != nil {
		t.Fatal(err)
	}
	if err := admit(shared("u2", at(time.Hour)), "op-2"); err != nil {
		t.Fatalf("a second shared claim: %v", err)
	}
	// ...and keep out a call judged against the state.
	if err := admit(claim("j1", at(time.Hour)), "op-3"); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("exclusive beside shared holders: %v, want ErrWriterBusy", err)
	}
	ws, err := s.StateWriters(t.Context(), "run-1")
	if err != nil || len(ws) != 2 || !ws[0].Shared || !ws[1].Shared {
		t.Fatalf("StateWriters = %+v, %v; want u1 and u2, shared", ws, err)
	}
	settle(t, s, "run-1", "op-1", types.OpCompleted, "u1")
	if err := admit(claim("j1", at(time.Hour)), "op-3"); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("exclusive beside one shared holder: %v, want ErrWriterBusy", err)
	}
	settle(t, s, "run-1", "op-2", types.OpCompleted, "u2")
	if err := admit(claim("j1", at(time.Hour)), "op-3"); err != nil {
		t.Fatalf("exclusive once the shared holders are gone: %v", err)
	}
	// An exclusive holder keeps out shared claims too.
	if err := admit(shared("u3", at(time.Hour)), "op-4"); !errors.Is(err, store.ErrWriterBusy) {
		t.Fatalf("shared beside an exclusive holder: %v, want ErrWriterBusy", err)
	}
	if !store.Conflicts(ws, claim("x", at(0)), at(0)) || store.Conflicts(ws, shared("x", at(0)), at(0)) || store.Conflicts(ws, claim("x", at(0)), at(2*time.Hour)) {
		t.Error("store.Conflicts disagrees with Admit")
	}
}
