package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// queries are the statements this store shares with store/postgres, in
// its form.
var queries = sqlq.SQLite.Queries()

// reads is the shared read path (sqlq.Reads), embedded in Store under
// this unexported name so that its methods (ListExecutions, GetApproval,
// GetOperation, StateWriters, ...) are the store's own.
type reads = sqlq.Reads

// newReads is the store's shared read path, on its read connections.
func (s *Store) newReads() sqlq.Reads {
	return sqlq.NewReads(sqlq.SQLite, (*readDB)(s), columns{})
}

// readDB is the store as the shared reads see it (sqlq.DB).
type readDB Store

// QueryRow runs a cached read statement that returns one row.
func (r *readDB) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	return (*Store)(r).queryRow(ctx, query, args...)
}

// Query runs a cached read statement.
func (r *readDB) Query(ctx context.Context, query string, args ...any) (sqlq.Rows, error) {
	rows, err := (*Store)(r).query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// NoRows reports whether err is database/sql's sql.ErrNoRows.
func (r *readDB) NoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ReadErr wraps the error of a read (see Store.readErr).
func (r *readDB) ReadErr(op string, err error) error { return (*Store)(r).readErr(op, err) }

// Closed reports whether Close was called.
func (r *readDB) Closed() bool { return r.closed.Load() }

// sqlRows are *sql.Rows as sqlq.Rows: a Close without an error (the rows'
// error is Err's).
type sqlRows struct{ *sql.Rows }

// Close releases the rows.
func (r sqlRows) Close() { _ = r.Rows.Close() }
