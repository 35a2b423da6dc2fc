package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/internal/migrations"
)

// MigrationStatus reads which migrations the schema at connString has,
// without changing anything: one read-only transaction reads the
// schema_migrations table (none means a new, empty schema). schema is
// Options.Schema; empty means the connection's current schema.
func MigrationStatus(ctx context.Context, connString, schema string) (store.MigrationStatus, error) {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return store.MigrationStatus{}, fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var st store.MigrationStatus
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if schema == "" {
			var cur *string
			if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&cur); err != nil {
				return err
			}
			if cur == nil {
				return errors.New("no schema of the search_path exists")
			}
			schema = *cur
		}
		var table *string
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1)::text", pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&table); err != nil {
			return err
		}
		current := 0
		if table != nil {
			q := "SELECT coalesce(max(version), 0) FROM " + pgx.Identifier{schema, "schema_migrations"}.Sanitize()
			if err := tx.QueryRow(ctx, q).Scan(&current); err != nil {
				return err
			}
		}
		st = migrations.Status("postgres", schema, current, embedded)
		return nil
	})
	if err != nil {
		return store.MigrationStatus{}, fmt.Errorf("postgres: read the schema version: %w", err)
	}
	return st, nil
}
