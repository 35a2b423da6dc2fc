package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// writeTx is what a request sees of the write connection: statements
// prepared once and kept, run in the batch transaction.
//
// They run on the driver's connection (sql.Conn.Raw), not through
// database/sql: the writer goroutine is the store's bottleneck, and
// database/sql's work around each statement (converting arguments, a Rows
// and a Row to scan one value) cost as much as SQLite's own on the
// SELECTs of a commit, for nothing the writer needs: it is the only user
// of its connection and never cancels a statement.
type writeTx struct {
	conn  *sql.Conn
	stmts map[string]driver.Stmt
	// args and row are reused by each statement.
	args []driver.NamedValue
	row  []driver.Value
}

// run calls f with the prepared statement of query, preparing it the first
// time, on the driver's connection. args are converted into tx.args first.
// f makes only driver calls. A panic in them becomes this statement's
// error: database/sql would discard a connection whose Raw function
// panics, and with it the store's only write connection.
func (tx *writeTx) run(ctx context.Context, query string, args []any, f func(st driver.Stmt) error) error {
	tx.args = tx.args[:0]
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		tx.args = append(tx.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	defer clear(tx.args)
	return tx.conn.Raw(func(dc any) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("sqlite: driver panicked: %v", p)
			}
		}()
		st, ok := tx.stmts[query]
		if !ok {
			prep, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return fmt.Errorf("sqlite: driver connection %T cannot prepare", dc)
			}
			if st, err = prep.PrepareContext(ctx, query); err != nil {
				return err
			}
			tx.stmts[query] = st
		}
		return f(st)
	})
}

// exec runs a statement that returns no rows.
func (tx *writeTx) exec(ctx context.Context, query string, args ...any) (res driver.Result, err error) {
	err = tx.run(ctx, query, args, func(st driver.Stmt) error {
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("sqlite: driver statement %T cannot exec", st)
		}
		res, err = ex.ExecContext(ctx, tx.args)
		return err
	})
	return res, err
}

// queryRow runs a statement that returns at most one row and scans it into
// dest (pointers to int64, int, string, bool, float64, []byte or a kind
// of them, or sql.Scanner); sql.ErrNoRows when it returns none.
func (tx *writeTx) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	if cap(tx.row) < len(dest) {
		tx.row = make([]driver.Value, len(dest))
	}
	row := tx.row[:len(dest)]
	defer clear(row)
	err := tx.run(ctx, query, args, func(st driver.Stmt) (err error) {
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			return fmt.Errorf("sqlite: driver statement %T cannot query", st)
		}
		rows, err := q.QueryContext(ctx, tx.args)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, rows.Close()) }()
		if n := len(rows.Columns()); n != len(dest) {
			return fmt.Errorf("sqlite: %d columns scanned into %d values", n, len(dest))
		}
		if err := rows.Next(row); err != nil {
			if err == io.EOF {
				return sql.ErrNoRows
			}
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The driver's values are copies (strings, bytes): they outlive the
	// statement's reset.
	for i, v := range row {
		if err := assign(dest[i], v); err != nil {
			return fmt.Errorf("sqlite: column %d: %w", i, err)
		}
	}
	return nil
}

// exists reports whether query (SELECT 1 ...) finds a row.
func (tx *writeTx) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	err := tx.queryRow(ctx, query, args, &one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// affected returns the rows a statement changed.
func (tx *writeTx) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// closeStatements releases the prepared statements.
func (tx *writeTx) closeStatements() {
	_ = tx.conn.Raw(func(any) error {
		for query, st := range tx.stmts {
			_ = st.Close()
			delete(tx.stmts, query)
		}
		return nil
	})
}

// driverValue is a as a value the driver binds, as database/sql would
// convert it.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, string, int64, float64, bool, []byte:
		return v, nil
	case int:
		return int64(v), nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

// assign stores the column value v (nil, int64, float64, string or []byte,
// as the driver gives them) into dest, as database/sql's Scan would for the
// kinds of dest the store uses.
func assign(dest any, v driver.Value) error {
	if sc, ok := dest.(sql.Scanner); ok {
		return sc.Scan(v)
	}
	switch d := dest.(type) {
	case *int64:
		if n, ok := v.(int64); ok {
			*d = n
			return nil
		}
	case *int:
		if n, ok := v.(int64); ok {
			*d = int(n)
			return nil
		}
	case *string:
		switch s := v.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		}
	}
	return assignReflect(dest, v)
}

// assignReflect is assign for the rarer kinds of dest: a named string or
// integer type, a bool, a float, bytes.
func assignReflect(dest any, v driver.Value) error {
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot scan into %T", dest)
	}
	e := rv.Elem()
	switch x := v.(type) {
	case int64:
		switch e.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			e.SetInt(x)
			return nil
		case reflect.Bool:
			e.SetBool(x != 0)
			return nil
		case reflect.Float32, reflect.Float64:
			e.SetFloat(float64(x))
			return nil
		}
	case float64:
		if k := e.Kind(); k == reflect.Float32 || k == reflect.Float64 {
			e.SetFloat(x)
			return nil
		}
	case string:
		if e.Kind() == reflect.String {
			e.SetString(x)
			return nil
		}
	case []byte:
		switch {
		case e.Kind() == reflect.String:
			e.SetString(string(x))
			return nil
		case e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8:
			e.SetBytes(bytes.Clone(x))
			return nil
		}
	}
	return fmt.Errorf("cannot scan %T into %T", v, dest)
}
