package sqlq

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
)

// Identity fills the two options both SQL stores default alike: the owner
// named in the ledger's leases (the host name, or "toolgate" when it has
// none) and the clock of the timestamps a caller leaves zero (the wall
// clock).
func Identity(owner string, c clock.Clock) (string, clock.Clock) {
	if owner == "" {
		owner, _ = os.Hostname()
		if owner == "" {
			owner = "toolgate"
		}
	}
	if c == nil {
		c = clock.Real{}
	}
	return owner, c
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
