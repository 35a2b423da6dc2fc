package e2e

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/types"
)

// TestSQLiteDiskFull runs the real binary with its SQLite file on a 16 MB
// tmpfs, under the same steady load as TestDependencyFaults, fills the
// file system for 3 s, then frees the space. Calls the store cannot admit
// must answer store_unavailable (HTTP 503, side_effect none), never
// internal_error; a call whose effect may have happened answers
// unknown_outcome and its row reaches the file once space is back; writes
// succeed within 5 s of the space coming back; and the whole history
// checks out (faultcheck.Check) after `toolgate reconcile`; the file passes
// SQLite's integrity_check.
//
// Mounting needs root: elsewhere the test is skipped, except with CI=true,
// where it fails.
func TestSQLiteDiskFull(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a 16 MB tmpfs at %s: %v (the disk-full scenario needs root)", mnt, err)
		}
		t.Skipf("mount a 16 MB tmpfs at %s: %v: the disk-full scenario needs root (it fails instead under CI=true)", mnt, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	full := faultcheck.DiskFull(mnt)(time.Second, 3*time.Second)
	res, err := faultcheck.Run(context.Background(), faultcheck.Options{
		Binary: binary, Dir: dir, Store: "sqlite:" + filepath.Join(mnt, "toolgate.db"), Pace: 20 * time.Millisecond,
		Schedule: func(*faultproxy.Proxy) func(int) *faultcheck.Fault { return faultcheck.FixedSchedule(full) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls (%d answered) %v; effects %d, ledger %d, duplicates %d, lost %d, missing rows %d, unsettled %d, reconciled %d, recovery %s, worst over budget %s",
		res.Calls, res.Answered, res.Codes, res.Effects, res.LedgerOps, res.Duplicates, res.Lost, res.MissingRows,
		res.Unsettled, res.Reconciled, res.WorstRecovery.Round(time.Millisecond), res.WorstOver.Round(time.Millisecond))
	for _, v := range res.Violations {
		t.Error(v)
	}
	if res.Codes[types.CodeStoreUnavailable] == 0 {
		t.Error("no call answered store_unavailable: the full disk never refused a call, so the scenario tested nothing")
	}
	db, err := sql.Open("sqlite", filepath.Join(mnt, "toolgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("the SQLite file after the full disk: integrity_check %q, %v", integrity, err)
	}
}
