package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/sim"
	"github.com/toolgate/toolgate/store/sqlite"
)

// tg runs one command in-process and returns its exit code, stdout
// and stderr.
func tg(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: os.Getenv}, args)
	return code, out.String(), errOut.String()
}

// A backup taken while the store is open elsewhere restores to a store
// whose run replays to the same state; migrate --status reads the store
// without changing it.
func TestBackupRestoreReplay(t *testing.T) {
	srv := httptest.NewServer(sim.NewPayments(sim.Order{OrderID: "ORD-1", CustomerID: "u", AmountPaise: 5000}))
	defer srv.Close()
	cfg := writeConfig(t, srv.URL)
	dir := filepath.Dir(cfg)

	if code, _, errOut := tg("migrate", "--status", "--config", cfg); code != 1 || !strings.Contains(errOut, "does not exist yet") {
		t.Errorf("migrate --status before the store exists: exit %d, %s", code, errOut)
	}
	if code, out, errOut := tg("call", "--config", cfg, "--principal", `{"id":"u"}`, "--run-id", "r1",
		"--tool", "issue_refund", "--args", `{"order_id":"ORD-1","amount_paise":500}`); code != 0 {
		t.Fatalf("call: exit %d\n%s%s", code, out, errOut)
	}

	// The store stays open, as serve would hold it, while the backup runs.
	held, err := sqlite.Open(context.Background(), filepath.Join(dir, "tg.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out, errOut := tg("backup", "--config", cfg, backup); code != 0 || !strings.Contains(out, "Backed up") {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := tg("backup", backup, "--config", cfg); code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("a backup over an existing file: exit %d, %s", code, errOut)
	}

	code, out, errOut := tg("migrate", "--config", cfg, "--status")
	if code != 0 || !strings.Contains(out, "schema version "+strconv.Itoa(sqlite.SchemaVersion)+", this toolgate knows") ||
		!strings.Contains(out, "(up to date)") || !strings.Contains(out, "applied  0001_init.sql") {
		t.Errorf("migrate --status: exit %d\n%s%s", code, out, errOut)
	}

	// Restore under another config: the run replays to the same state.
	restored := t.TempDir()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "toolgate.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "tg.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = tg("replay", "--config", filepath.Join(restored, "toolgate.yaml"), "r1")
	if code != 0 || !strings.Contains(out, "refund_id") {
		t.Errorf("replay of the restored run: exit %d\n%s%s", code, out, errOut)
	}
}

// A store written by a newer toolgate is refused by migrate, runs and
// replay with what to do, and left at its version.
func TestNewerStoreRefused(t *testing.T) {
	cfg := writeConfig(t, "http://127.0.0.1:1")
	path := filepath.Join(filepath.Dir(cfg), "tg.db")
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	newer := sqlite.SchemaVersion + 2
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	code, out, errOut := tg("migrate", "--status", "--config", cfg)
	if code != 1 || !strings.Contains(out, "(the store is NEWER") || !strings.Contains(errOut, "docs/upgrade.md") {
		t.Errorf("migrate --status: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"migrate", "--config", cfg}, {"replay", "--config", cfg, "r1"}} {
		code, _, errOut := tg(args...)
		if code != 1 || !strings.Contains(errOut, "newer than this toolgate knows") || !strings.Contains(errOut, "docs/upgrade.md") {
			t.Errorf("%s: exit %d, %s", args[0], code, errOut)
		}
	}
	st2, err := sqlite.MigrationStatus(context.Background(), path)
	if err != nil || st2.Current != newer {
		t.Errorf("the store's version is now %d (%v), want %d untouched", st2.Current, err, newer)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := tg("version")
	if code != 0 || !strings.HasPrefix(out, "toolgate ") || !strings.Contains(out, "\ngo       go1.") {
		t.Errorf("version: exit %d\n%s", code, out)
	}
	if code, out2, _ := tg("--version"); code != 0 || out2 != out {
		t.Errorf("--version: exit %d\n%s", code, out2)
	}
	if code, _, _ := tg("version", "extra"); code != 2 {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}
