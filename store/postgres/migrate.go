package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"github.com/toolgate/toolgate/store/internal/migrations"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFiles are the schema changes, named NNNN_what.sql and numbered
// from 0001 without gaps. A file, once released, never changes.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the schema version this binary creates and knows: the
// number of the last embedded migration.
const SchemaVersion = 5

// MigrationLockClass is the first key of the advisory lock that serialises
// migrations: pg_advisory_xact_lock(MigrationLockClass, hashtext(schema)).
// It spells "tool" in ASCII.
const MigrationLockClass int32 = 0x746f6f6c

// migrations are the embedded migrations in order.
var embedded = migrations.MustLoad("postgres", migrationFiles, SchemaVersion)

// SchemaVersionError is the answer of Open on a database whose schema is
// newer than this binary knows: a newer toolgate wrote it. It is left
// untouched.
type SchemaVersionError = migrations.SchemaVersionError

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
	for _, m := range embedded[current:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("migration %s: record version: %w", m.Name, err)
		}
	}
	if current < SchemaVersion {
		log.Info("postgres: schema migrated", "schema", schema, "from", current, "to", SchemaVersion)
	}
	return nil
}
