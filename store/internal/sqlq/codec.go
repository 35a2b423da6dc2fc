package sqlq

import (
	"bytes"
	"encoding/json"
	"time"
)

// Nanos is t as unix nanoseconds, the form both stores keep times in; the
// zero time is 0.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNanos is the UTC time of unix nanoseconds n; 0 is the zero time.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// DecodeExact decodes JSON keeping numbers as json.Number, so that a
// principal's attributes come back as exact as they went in.
func DecodeExact(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// Columns gives a driver's scan destinations for the two kinds of column
// it does not scan into a Go field by itself. Both must answer a value
// that a driver's Scan accepts without allocating per row.
type Columns interface {
	// Time is where an integer column of unix nanoseconds is scanned
	// into *t (0 is the zero time).
	Time(t *time.Time) any
	// JSON is where a nullable JSON column is scanned into *raw: a fresh
	// copy of its text, NULL leaving it nil.
	JSON(raw *json.RawMessage) any
}
