package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/store/internal/sqlq"
)

// nanos is t as unix nanoseconds (sqlq.Nanos).
func nanos(t time.Time) int64 { return sqlq.Nanos(t) }

// fromNanos is the time of unix nanoseconds n (sqlq.FromNanos).
func fromNanos(n int64) time.Time { return sqlq.FromNanos(n) }

// jsonText is raw as a TEXT value, byte for byte; nil is NULL
// (sqlq.Dialect.JSONArg).
func jsonText(raw json.RawMessage) any { return sqlq.SQLite.JSONArg(raw) }

// jsonColumn scans a nullable TEXT column of JSON into a fresh
// json.RawMessage; NULL leaves it nil.
type jsonColumn struct{ raw *json.RawMessage }

// Scan implements sql.Scanner.
func (c jsonColumn) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.raw = nil
	case string:
		*c.raw = json.RawMessage(v)
	case []byte:
		*c.raw = json.RawMessage(bytes.Clone(v))
	default:
		return fmt.Errorf("sqlite: JSON column holds %T", src)
	}
	return nil
}

// timeColumn scans an INTEGER column of unix nanoseconds into a time.
type timeColumn struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c timeColumn) Scan(src any) error {
	n, ok := src.(int64)
	if !ok {
		return fmt.Errorf("sqlite: time column holds %T", src)
	}
	*c.t = fromNanos(n)
	return nil
}

// columns are SQLite's scan destinations of the shared row scans: the
// sql.Scanners jsonColumn and timeColumn.
type columns struct{}

// Time scans an INTEGER column of unix nanoseconds into *t.
func (columns) Time(t *time.Time) any { return timeColumn{t} }

// JSON scans a nullable TEXT column of JSON into *raw.
func (columns) JSON(raw *json.RawMessage) any { return jsonColumn{raw} }
