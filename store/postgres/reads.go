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

// reads is the shared read path (sqlq.Reads), embedded in Store under
// this unexported name so that its methods (ListExecutions, GetApproval,
// GetOperation, StateWriters, ...) are the store's own.
type reads = sqlq.Reads

// newReads is the store's shared read path, on its read connections.
func (s *Store) newReads() sqlq.Reads {
	return sqlq.NewReads(sqlq.PostgreSQL, (*readDB)(s), columns{})
}

// readDB is the store as the shared reads see it (sqlq.DB).
type readDB Store

// QueryRow runs a read that returns one row on a connection of the pool,
// within Options.ReadTimeout (taking the connection included) while the
// store's liveness is not confirmed, else within Options.WriteTimeout;
// either is cut when the liveness is lost meanwhile (liveRow.Scan).
func (r *readDB) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	return &liveRow{s: (*Store)(r), ctx: ctx, query: query, args: args}
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
