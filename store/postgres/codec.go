package postgres

import (
	"encoding/json"
	"strconv"
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

// jsonArg is raw as the text of a json parameter, byte for byte; empty is
// NULL (an empty text is no JSON document).
func jsonArg(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

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
