// Package storeurl opens a store from the config's `store:` string.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/sqlite"
)

// postgresLeaseSweep is how often a PostgreSQL store turns the started
// operations whose lease ended (their owner died) into unknown ones.
const postgresLeaseSweep = 15 * time.Second

// Options say how to open a store.
type Options struct {
	// Owner is this process's name in the ledger's leases.
	Owner string
	// Recover runs crash recovery on a SQLite file: when no other process
	// has the file open for serving (an exclusive lock on PATH.lock), every
	// operation left started by an earlier process is turned to unknown, so
	// that its next call verifies before anything is sent again. The lock is
	// held until the store is closed. Commands that only read (stats, prune)
	// leave Recover false.
	Recover bool
}

// Open opens "memory", "sqlite:PATH" or "postgres://...".
func Open(ctx context.Context, url string, o Options) (store.Store, error) {
	switch {
	case url == "memory":
		return memory.New(), nil
	case strings.HasPrefix(url, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(url, "sqlite:"), o)
	case strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://"):
		return openPostgres(ctx, url, o)
	}
	return nil, fmt.Errorf("store %q: unknown kind (use memory, sqlite:PATH or postgres://...)", url)
}

func openSQLite(ctx context.Context, path string, o Options) (store.Store, error) {
	st, err := sqlite.Open(ctx, path, sqlite.Options{Owner: o.Owner})
	if err != nil {
		return nil, err
	}
	if !o.Recover {
		return st, nil
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("crash recovery: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// Another process serves this file: its operations are alive, and
		// leases settle any that are not.
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return st, nil
		}
		st.Close()
		return nil, fmt.Errorf("crash recovery: lock %s: %w", path+".lock", err)
	}
	if _, err := st.AbandonOwner(ctx, ""); err != nil {
		lock.Close()
		st.Close()
		return nil, fmt.Errorf("crash recovery: %w", err)
	}
	return &locked{Store: st, lock: lock}, nil
}

// openPostgres opens a PostgreSQL store. Several replicas share its
// database, so Recover abandons nothing: another replica's started
// operations may be in flight. A dead replica's operations turn unknown
// once its liveness lock is found free and the fencing delay has passed
// (a call that waits on one checks at once; the background sweep every
// postgresLeaseSweep checks too), or at the latest when their leases end:
// ExpireLeases runs in the background every postgresLeaseSweep, and a
// call that meets an expired lease runs it too.
func openPostgres(ctx context.Context, url string, o Options) (store.Store, error) {
	return postgres.Open(ctx, url, postgres.Options{Owner: o.Owner, ExpireLeasesEvery: postgresLeaseSweep})
}

// locked is a SQLite store that holds the file's serving lock.
type locked struct {
	*sqlite.Store
	lock *os.File
}

// Close closes the store, then releases the lock.
func (l *locked) Close() error {
	err := l.Store.Close()
	l.lock.Close()
	return err
}
