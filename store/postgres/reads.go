package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// queries are the statements this store shares with store/sqlite, in its
// form.
var queries = sqlq.PostgreSQL.Queries()

// shared is the reads this store shares with store/sqlite (sqlq.Reads),
// over its pool.
func (s *Store) shared() sqlq.Reads {
	return sqlq.NewReads(sqlq.PostgreSQL, (*readDB)(s), columns{})
}

// readDB is the store as the shared reads see it (sqlq.DB).
type readDB Store

// QueryRow runs a read that returns one row on a connection of the pool.
func (r *readDB) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	return r.pool.QueryRow(ctx, query, args...)
}

// Query runs a read on a connection of the pool.
func (r *readDB) Query(ctx context.Context, query string, args ...any) (sqlq.Rows, error) {
	return r.pool.Query(ctx, query, args...)
}

// NoRows reports whether err is pgx's pgx.ErrNoRows.
func (r *readDB) NoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// ReadErr wraps the error of a read (see Store.readErr).
func (r *readDB) ReadErr(op string, err error) error { return (*Store)(r).readErr(op, err) }

// Closed reports whether Close was called.
func (r *readDB) Closed() bool { return r.closed.Load() }
