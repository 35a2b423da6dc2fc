package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/migrations"
)

// openReadOnly opens the database at path for reading only (mode=ro): it
// is never created, migrated or written, and a serving process may hold it.
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite: %s does not exist", path)
		}
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// MigrationStatus reads the schema version of the database at path without
// changing it (see store.MigrationStatus). A missing file is an error: the
// store does not exist yet, and every migration would run when it is made.
func MigrationStatus(ctx context.Context, path string) (store.MigrationStatus, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return store.MigrationStatus{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return store.MigrationStatus{}, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer conn.Close()
	current, err := userVersion(ctx, conn)
	if err != nil {
		return store.MigrationStatus{}, err
	}
	return migrations.Status("sqlite", path, current, embedded), nil
}

// Backup writes a consistent copy of the database at path to out while
// other processes may be writing to it (VACUUM INTO from a read-only
// connection: one read transaction, so one snapshot). The copy is made
// beside out and renamed into place, so out is either absent or whole; an
// existing out is never overwritten. A database newer than this binary is
// copied all the same (a backup before a downgrade is the point).
func Backup(ctx context.Context, path, out string) error {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("sqlite: backup: %s exists; choose a new file name (a backup never overwrites)", out)
	}
	db, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO wants to create the file itself
	defer os.Remove(name)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return fmt.Errorf("sqlite: backup of %s: %w", path, err)
	}
	if f, err := os.Open(name); err == nil {
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sqlite: backup: sync: %w", err)
		}
	}
	// Link, not rename: it fails when out appeared meanwhile.
	if err := os.Link(name, out); err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	return nil
}
