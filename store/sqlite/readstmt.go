package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// readStmts caches the read pool's prepared statements: SQLite parses a
// query each time it is prepared, and parsing was a tenth of a call's CPU.
// An *sql.Stmt prepared on the pool re-prepares itself per connection once.
type readStmts struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (r *readStmts) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[query]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if r.stmts == nil {
		r.stmts = map[string]*sql.Stmt{}
	}
	r.stmts[query] = st
	return st, nil
}

func (r *readStmts) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.stmts {
		st.Close()
	}
	r.stmts = nil
}

// queryRow runs a cached read statement that returns one row.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.stmts.get(ctx, s.readDB, query)
	if err != nil {
		// Let the error surface through Row.Scan, as QueryRowContext would.
		return s.readDB.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs a cached read statement.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmts.get(ctx, s.readDB, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
