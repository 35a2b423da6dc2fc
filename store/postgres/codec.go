package postgres

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// nanos is t as unix nanoseconds (sqlq.Nanos).
func nanos(t time.Time) int64 { return sqlq.Nanos(t) }

// jsonArg is raw as the text of a json parameter (sqlq.Dialect.JSONArg):
// empty is NULL, an empty text being no JSON document.
func jsonArg(raw json.RawMessage) any { return sqlq.PostgreSQL.JSONArg(raw) }

// params numbers the parameters of a statement built piece by piece: each
// add returns the placeholder ($1, $2, ...) of its value.
type params struct{ values []any }

// add appends v and returns its placeholder.
func (p *params) add(v any) string {
	p.values = append(p.values, v)
	return "$" + strconv.Itoa(len(p.values))
}

// typed appends v and returns its placeholder cast to the SQL type typ.
func (p *params) typed(v any, typ string) string { return p.add(v) + "::" + typ }

// columns are pgx's scan destinations of the shared row scans: timeColumn
// for a bigint of unix nanoseconds, the bytes of a json column.
type columns struct{}

// Time scans a bigint column of unix nanoseconds into *t.
func (columns) Time(t *time.Time) any { return timeColumn{t} }

// JSON scans a nullable json column into *raw: pgx copies the text into a
// fresh slice, and NULL leaves it nil.
func (columns) JSON(raw *json.RawMessage) any { return (*[]byte)(raw) }

// timeColumn scans a bigint of unix nanoseconds into a time, through pgx's
// pgtype.Int64Scanner: no int64 boxed per row.
type timeColumn struct{ t *time.Time }

// ScanInt64 implements pgtype.Int64Scanner.
func (c timeColumn) ScanInt64(v pgtype.Int8) error {
	if !v.Valid {
		return errors.New("postgres: time column is NULL")
	}
	*c.t = sqlq.FromNanos(v.Int64)
	return nil
}
