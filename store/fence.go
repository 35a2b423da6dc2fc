package store

import (
	"context"
	"errors"
)

// ErrNotLive: a Fencer's process cannot confirm that it is alive in the
// shared store (its liveness connection broke or did not answer in time),
// so it must neither begin nor send a write until it is live again.
var ErrNotLive = errors.New("store: liveness not confirmed")

// Fence is a process's proof of liveness in a shared store at one moment:
// the owner id it holds its liveness under and that holding's generation.
// A process that loses its liveness gets a new owner id (and generation)
// when it regains it, so operations begun under an old Fence can be taken
// over by other processes and are never sent by this one again.
type Fence struct {
	Owner string
	Gen   uint64
}

// Fencer is implemented by stores that several processes share
// (store/postgres): each process holds a liveness lock under its owner id,
// others detect a dead owner in seconds instead of at its leases' end, and
// a process that lost its liveness stops sending (fencing).
//
// A write is begun under the Fence that Fence returns and sent only while
// Holds says that fence still holds; TakeOver surfaces the operations of an
// owner whose liveness is gone.
type Fencer interface {
	// Fence returns this process's current owner id and generation, or an
	// error wrapping ErrNotLive when liveness is not confirmed now.
	Fence() (Fence, error)
	// Holds reports whether f is still this process's current liveness,
	// confirmed recently enough that no other process can have taken its
	// operations over. Call it right before sending a write.
	Holds(f Fence) bool
	// TakeOver reports whether owner's liveness has been gone long enough
	// that owner can no longer send (then it has turned owner's started
	// operations into unknown ones). It answers false while owner may be
	// alive, or until the fencing delay has passed since its liveness was
	// found gone: call it again as the wait goes on. It never takes over
	// this process's current owner id.
	TakeOver(ctx context.Context, owner string) (bool, error)
}
