package store

import (
	"context"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/toolgate/toolgate/types"
)

// ErrWriterBusy: Admit found the run's state-writer slot held by another
// call whose lease has not ended, in a mode that conflicts with the claim
// (see WriterClaim). Nothing was written.
var ErrWriterBusy = errors.New("store: the run's state-writer slot is held by another call")

// Limiter keeps the limits that must hold when a model calls tools in
// parallel (part of Store): a run's state-writer slot (at most
// one call that reads or changes the run's state in flight per run) and
// quota reservations (limits shared across runs, over a sliding window).
//
// The slot and the reservations are taken in the same durable write that
// takes the call's step and begins its operation (Admit); the slot is
// cleared by the Commit that settles the call (Commit.ReleaseWriter), and
// a reservation is dropped by the Commit that deletes its operation (the
// call provably did nothing), kept otherwise. The database is the arbiter,
// on one process and across replicas.
type Limiter interface {
	// Admit takes, in one durable write, the run's next step (unless
	// a.Step says the call has one), the run's state-writer slot
	// (a.Writer), the operation (a.Operation, begun as BeginOperation
	// would) and, only when the operation is begun, its quota reservations
	// (a.Quotas). The slot is neither needed nor taken when the operation
	// exists and is started or completed: the call will wait for it or
	// replay it, changing no state (Admitted.Writer says whether it was
	// taken). It writes nothing and answers
	// ErrWriterBusy when the slot is held by another unexpired holder,
	// ErrStepBudget when the run's steps are spent, ErrNotFound without
	// the run; and with Admitted.Denied set (no error) when a quota would
	// be exceeded.
	Admit(ctx context.Context, a *Admission) (*Admitted, error)
	// StateWriters lists the run's slot holders (their leases may have
	// ended: see Conflicts).
	StateWriters(ctx context.Context, runID string) ([]StateWriter, error)
	// ReleaseStateWriter clears the run's slot if holder still holds it
	// (for a call whose Commit could not be written).
	ReleaseStateWriter(ctx context.Context, runID, holder string) error
	// QuotaUsage lists every (quota, key) with a reservation inside its
	// window at now; windows gives each quota's window by name (a quota
	// missing from it is left out).
	QuotaUsage(ctx context.Context, now time.Time, windows map[string]time.Duration) ([]QuotaUse, error)
}

// Admission is what Admit takes for one call.
type Admission struct {
	// RunID is the call's run. Required.
	RunID string
	// Writer, when set, asks for the run's state-writer slot.
	Writer *WriterClaim
	// Operation, when set, is begun (see BeginOperation); nil for a call
	// that begins none (a read that updates the state).
	Operation *types.Operation
	// Quotas are reserved under Operation.Key, only when Operation is
	// begun by this call (a replay or a repeat reserves nothing).
	Quotas []QuotaClaim
	// Now is the time of the reservations and of the lease check.
	Now time.Time
	// Step, when not 0, is the step the call took at an earlier
	// admission: no other is taken.
	Step int64
}

// WriterClaim asks for a run's state-writer slot.
//
// The slot has two modes. An exclusive claim (a call whose rules read the
// state) is refused while any other call holds the slot; a shared claim
// (a call that only updates the state, its rules never reading it) is
// refused only while an exclusive holder has it. So a call judged against
// the state runs alone, while calls whose updates are simply applied in
// commit order to the newest state may run together.
type WriterClaim struct {
	// Holder names this call's hold (unique per call).
	Holder string
	// Shared makes the claim shared (see above); false is exclusive.
	Shared bool
	// Owner is the process holding it; AbandonOwner clears its slots.
	Owner string
	// LeaseUntil is when the holder is presumed dead: after it another
	// call may take the slot.
	LeaseUntil time.Time
}

// StateWriter is one holder of a run's slot.
type StateWriter struct {
	Holder, Owner string
	LeaseUntil    time.Time
	Shared        bool
}

// Conflicts reports whether claim must wait for one of holders at now: an
// exclusive claim for any other holder, a shared one for another
// exclusive holder; a holder whose lease ended before now is presumed
// dead and counts for nothing.
func Conflicts(holders []StateWriter, claim *WriterClaim, now time.Time) bool {
	for _, h := range holders {
		if h.Holder != claim.Holder && !h.LeaseUntil.Before(now) && (!claim.Shared || !h.Shared) {
			return true
		}
	}
	return false
}

// QuotaClaim is one reservation to make: Amount of (Quota, Key), refused
// if the reservations of (Quota, Key) made after Now-Window plus Amount
// would pass Limit.
type QuotaClaim struct {
	Quota  string
	Key    string
	Amount int64
	Limit  int64
	Window time.Duration
}

// Admitted is what Admit did.
type Admitted struct {
	// Step is the step taken.
	Step int64
	// Version is the run's version as the write saw it: a call judged
	// against an older version must be judged again (the state may have
	// changed), now that it holds the slot.
	Version int64
	// Existing and Began are BeginOperation's answers (Began false and
	// Existing nil when no operation was asked for).
	Existing *types.Operation
	Began    bool
	// Writer is true when the call now holds the run's state-writer slot.
	Writer bool
	// Denied, when set, is the quota that refused the call; nothing was
	// written (no step, no slot, no operation).
	Denied *QuotaDenial
}

// QuotaDenial says why a quota refused a call.
type QuotaDenial struct {
	Quota  string
	Key    string
	Used   int64 // inside the window at Now
	Limit  int64
	Amount int64 // what the call asked for
	// FreesAt is when enough of the window's use expires for the call to
	// fit; zero when it never can (Amount > Limit).
	FreesAt time.Time
}

// QuotaUse is the use of one (quota, key) inside its window.
type QuotaUse struct {
	Quota        string
	Key          string
	Used         int64
	Reservations int
	// Oldest is the oldest reservation inside the window: its amount
	// frees at Oldest + window.
	Oldest time.Time
}

// Reservation is one quota reservation, as the stores keep it.
type Reservation struct {
	At     time.Time
	Amount int64
}

// FreesAt is when a claim of amount fits under limit, given the window's
// reservations (in any order) that sum to used: the moment enough of the
// oldest expire. It is zero when the claim can never fit.
func FreesAt(rows []Reservation, used, amount, limit int64, window time.Duration) time.Time {
	if amount > limit {
		return time.Time{}
	}
	sorted := append([]Reservation(nil), rows...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].At.Before(sorted[j].At) })
	for _, r := range sorted {
		used -= r.Amount
		if Fits(used, amount, limit) {
			return r.At.Add(window)
		}
	}
	return time.Time{}
}

// Fits reports whether a claim of amount fits under limit beside used:
// used + amount <= limit, computed without overflow. A sum past the int64
// range never fits (it is past every limit), so an amount of 2^63-1 beside
// any use above 0 is refused instead of wrapping to a negative use.
func Fits(used, amount, limit int64) bool {
	sum, ok := AddChecked(used, amount)
	if !ok {
		return used < 0 // past the bottom of int64: under every limit
	}
	return sum <= limit
}

// AddChecked returns a + b and whether the sum is exact; when it is not, the
// result is the wrapped sum, whose sign is the opposite of the true one.
func AddChecked(a, b int64) (int64, bool) {
	sum := a + b
	if (a > 0 && b > 0 && sum < 0) || (a < 0 && b < 0 && sum >= 0) {
		return sum, false
	}
	return sum, true
}

// AddSaturating returns a + b, held at the int64 bounds instead of
// wrapping: the sums of quota use and of token counts.
func AddSaturating(a, b int64) int64 {
	sum, ok := AddChecked(a, b)
	switch {
	case ok:
		return sum
	case a > 0:
		return math.MaxInt64
	default:
		return math.MinInt64
	}
}
