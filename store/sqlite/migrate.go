package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"github.com/toolgate/toolgate/store/internal/migrations"
	"log/slog"
	"strconv"
)

// migrationFiles are the schema changes, named NNNN_what.sql and numbered
// from 0001 without gaps. A file, once released, never changes.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the schema version this binary creates and knows: the
// number of the last embedded migration.
const SchemaVersion = 5

// migrations are the embedded migrations in order.
var embedded = migrations.MustLoad("sqlite", migrationFiles, SchemaVersion)

// SchemaVersionError is the answer of Open on a database whose schema is
// newer than this binary knows: a newer toolgate wrote it. It is left
// untouched.
type SchemaVersionError = migrations.SchemaVersionError

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
	for _, m := range embedded[current:] {
		if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
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
