package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrationFiles are the schema changes, named NNNN_what.sql and numbered
// from 0001 without gaps. A file, once released, never changes.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema change; applying it brings the schema to version.
type migration struct {
	version int
	name    string
	sql     string
}

// SchemaVersion is the schema version this binary creates and knows: the
// number of the last embedded migration.
const SchemaVersion = 4

// migrations are the embedded migrations in order.
var migrations = mustLoadMigrations(migrationFiles)

// SchemaVersionError is the answer of Open on a database whose schema is
// newer than this binary knows: a newer toolgate wrote it. The file is left
// untouched.
type SchemaVersionError struct {
	// Found is the database's schema version; Known is SchemaVersion.
	Found, Known int
}

// Error says what happened and what to do.
func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this toolgate (knows %d); upgrade toolgate", e.Found, e.Known)
}

// mustLoadMigrations reads and orders the migrations of fsys; a bad name or
// a gap in the numbers is a programming error and panics at start-up.
func mustLoadMigrations(fsys fs.FS) []migration {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		number, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(number)
		if !ok || err != nil || version <= 0 {
			panic(fmt.Sprintf("sqlite: migration %s is not named NNNN_what.sql", name))
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: version, name: base, sql: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("sqlite: migration %s: want version %d (no gaps)", m.name, i+1))
		}
	}
	if len(out) != SchemaVersion {
		panic(fmt.Sprintf("sqlite: %d migrations embedded, SchemaVersion is %d", len(out), SchemaVersion))
	}
	return out
}

// migrate brings the database on conn to SchemaVersion, all missing
// migrations in one transaction, and records the version in PRAGMA
// user_version. A database newer than SchemaVersion is a
// *SchemaVersionError and is not touched.
func migrate(ctx context.Context, conn *sql.Conn, log *slog.Logger) error {
	current, err := userVersion(ctx, conn)
	if err != nil {
		return err
	}
	if current > SchemaVersion {
		return &SchemaVersionError{Found: current, Known: SchemaVersion}
	}
	if current == SchemaVersion {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	if err := applyMigrations(ctx, conn, log); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("sqlite: migrate: commit: %w", err)
	}
	return nil
}

// applyMigrations runs, inside the open transaction, the migrations the
// database lacks. It reads the version again under the write lock: another
// process may have migrated meanwhile.
func applyMigrations(ctx context.Context, conn *sql.Conn, log *slog.Logger) error {
	current, err := userVersion(ctx, conn)
	if err != nil {
		return err
	}
	if current > SchemaVersion {
		return &SchemaVersionError{Found: current, Known: SchemaVersion}
	}
	for _, m := range migrations[current:] {
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	// PRAGMA takes no parameters; the version is our own integer.
	if _, err := conn.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(SchemaVersion)); err != nil {
		return fmt.Errorf("sqlite: migrate: record version: %w", err)
	}
	log.Info("sqlite: schema migrated", "from", current, "to", SchemaVersion)
	return nil
}

// userVersion reads the schema version recorded in the database file.
func userVersion(ctx context.Context, conn *sql.Conn) (int, error) {
	var version int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("sqlite: read schema version: %w", err)
	}
	return version, nil
}
