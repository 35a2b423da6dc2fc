package sqlq

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Identity fills the options both SQL stores default alike: the owner
// named in the ledger's leases (the host name, or "toolgate" when it has
// none), the clock of the timestamps a caller leaves zero (the wall clock)
// and the logger of the store's few messages (discarded).
func Identity(owner string, c clock.Clock, log *slog.Logger) (string, clock.Clock, *slog.Logger) {
	if owner == "" {
		owner, _ = os.Hostname()
		if owner == "" {
			owner = "toolgate"
		}
	}
	if c == nil {
		c = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return owner, c, log
}

// SlotNeed reads the operation-status lookup at the start of an admission
// (err is the lookup's error, noRows the driver's "no row" error): whether
// the operation exists, and whether a call that wants the state-writer
// slot still needs it (a repeat that waits or replays changes no state, so
// only an unknown operation's repeat takes the slot again).
func SlotNeed(wantsSlot bool, status string, err, noRows error) (exists, needSlot bool, _ error) {
	switch {
	case err == nil:
		return true, wantsSlot && types.OpStatus(status) == types.OpUnknown, nil
	case errors.Is(err, noRows):
		return false, wantsSlot, nil
	}
	return false, false, err
}

// ReadErr is a read's error as a store answers it: nil for nil,
// store.ErrClosed once closed reports true (the read failed because the
// store was closing), otherwise err wrapped as "driver: op: err".
func ReadErr(driver string, closed *atomic.Bool, op string, err error) error {
	if err == nil {
		return nil
	}
	if closed.Load() {
		return store.ErrClosed
	}
	return fmt.Errorf("%s: %s: %w", driver, op, err)
}
