package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// nanos is t as unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the UTC time of unix nanoseconds n; 0 is the zero time.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// jsonText is raw as a TEXT value, byte for byte; nil is NULL.
func jsonText(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

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
