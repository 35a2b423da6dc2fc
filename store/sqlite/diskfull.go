package sqlite

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/toolgate/toolgate/store"
)

// diskFull marks err as store.ErrUnavailable when SQLite could not write
// for want of space: SQLITE_FULL (SQLite turns a write's ENOSPC into it),
// or ENOSPC or EDQUOT from a write or an fsync of toolgate's own. A write
// that failed so was rolled back: nothing of it is in the file, and the
// same write succeeds once space is back (docs/reliability.md). Other
// errors are returned as they are.
func diskFull(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	var se *sqlite.Error
	full := errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
	if full || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: the disk is full: %w", store.ErrUnavailable, err)
	}
	return err
}
