package sqlq

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/store"
)

// Row is one row of a query: *sql.Row and pgx.Row both are.
type Row interface {
	// Scan copies the row's columns into dest; a driver error when there
	// is no row (DB.NoRows tells which).
	Scan(dest ...any) error
}

// Rows are the rows of a query, read one at a time: pgx.Rows is; a
// *sql.Rows is once wrapped so that Close returns nothing.
type Rows interface {
	// Next moves to the next row, false after the last or on an error.
	Next() bool
	// Scan copies the current row's columns into dest.
	Scan(dest ...any) error
	// Err is the error that stopped Next, if any.
	Err() error
	// Close releases the rows; it may be called more than once.
	Close()
}

// DB is what a store lends the shared reads: its read connections, the
// form of its driver's errors and whether it is closed.
type DB interface {
	// QueryRow runs a read that returns at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs a read that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// NoRows reports whether err is the driver's "no row" of Row.Scan.
	NoRows(err error) bool
	// ReadErr wraps the error of the read op (nil stays nil); a read that
	// lost the race with Close answers store.ErrClosed.
	ReadErr(op string, err error) error
	// Closed reports whether the store was closed.
	Closed() bool
}

// Reads are the reads both SQL stores make the same way. A store's read
// methods call them on NewReads(its dialect, its DB, its columns): a value
// of six words, cheap to make for each call.
type Reads struct {
	db      DB
	cols    Columns
	q       *Queries
	dialect *Dialect
}

// NewReads returns the reads of a store of dialect d over db, scanning with
// cols.
func NewReads(d *Dialect, db DB, cols Columns) Reads {
	return Reads{db: db, cols: cols, q: d.queries, dialect: d}
}

// errClosed is the answer of every read after Close.
var errClosed = store.ErrClosed

// notFound is store.ErrNotFound for the read op, in the store's form.
func (r Reads) notFound(op string) error {
	return fmt.Errorf("%s: %s: %w", r.dialect.Name, op, store.ErrNotFound)
}

// list runs the read op (query, args) and scans each of its rows into a T
// with scan.
func list[T any](ctx context.Context, r Reads, op, query string, args []any, scan func(Row, *T) error) ([]T, error) {
	if r.db.Closed() {
		return nil, errClosed
	}
	rows, err := r.db.Query(ctx, query, args...)
	if err != nil {
		return nil, r.db.ReadErr(op, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, r.db.ReadErr(op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, r.db.ReadErr(op, err)
	}
	return out, nil
}
