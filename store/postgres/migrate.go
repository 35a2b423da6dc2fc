package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
const SchemaVersion = 2

// MigrationLockClass is the first key of the advisory lock that serialises
// migrations: pg_advisory_xact_lock(MigrationLockClass, hashtext(schema)).
// It spells "tool" in ASCII.
const MigrationLockClass int32 = 0x746f6f6c

// migrations are the embedded migrations in order.
var migrations = mustLoadMigrations(migrationFiles)

// SchemaVersionError is the answer of Open on a schema newer than this
// binary knows: a newer toolgate wrote it. The schema is left untouched.
type SchemaVersionError struct {
	// Found is the schema's version; Known is SchemaVersion.
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
			panic(fmt.Sprintf("postgres: migration %s is not named NNNN_what.sql", name))
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
			panic(fmt.Sprintf("postgres: migration %s: want version %d (no gaps)", m.name, i+1))
		}
	}
	if len(out) != SchemaVersion {
		panic(fmt.Sprintf("postgres: %d migrations embedded, SchemaVersion is %d", len(out), SchemaVersion))
	}
	return out
}

const createVersionTableSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`

// migrate brings the schema to SchemaVersion and returns its name. schema
// is Options.Schema: created if missing; when empty, the connection's
// current schema is used.
//
// Everything happens in one transaction that first takes the advisory lock
// of the schema, so that processes opening the store at once migrate one
// after the other; the version is read under the lock. DDL is
// transactional in PostgreSQL: a failed migration leaves nothing behind.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, log *slog.Logger) (string, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	if schema == "" {
		var current *string
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&current); err != nil {
			return "", fmt.Errorf("read the current schema: %w", err)
		}
		if current == nil {
			return "", errors.New("no schema of the search_path exists; create one or set Options.Schema")
		}
		schema = *current
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		return applyMigrations(ctx, tx, schema, log)
	})
	if err != nil {
		return "", err
	}
	return schema, nil
}

// applyMigrations runs, inside tx, the migrations the schema lacks.
func applyMigrations(ctx context.Context, tx pgx.Tx, schema string, log *slog.Logger) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", MigrationLockClass, schema); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	// The schema is our own identifier, quoted by pgx: DDL takes no
	// parameters.
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident); err != nil {
		return fmt.Errorf("migrate: create schema %s: %w", ident, err)
	}
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+ident); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, createVersionTableSQL); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if current > SchemaVersion {
		return &SchemaVersionError{Found: current, Known: SchemaVersion}
	}
	for _, m := range migrations[current:] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return fmt.Errorf("migration %s: record version: %w", m.name, err)
		}
	}
	if current < SchemaVersion {
		log.Info("postgres: schema migrated", "schema", schema, "from", current, "to", SchemaVersion)
	}
	return nil
}
