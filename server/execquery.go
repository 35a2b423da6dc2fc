package server

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Limits of GET /v1/executions.
const (
	// DefaultListLimit is the rows answered when no limit is given.
	DefaultListLimit = 100
	// MaxListLimit is the largest limit accepted.
	MaxListLimit = 1000
)

// executionQueryParams are the query parameters GET /v1/executions takes.
var executionQueryParams = []string{"run", "key", "tool", "code", "since", "until", "limit", "cursor"}

// codeShape is what an outcome code looks like (the codes of toolgate and
// of rules alike).
var codeShape = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// cursorPrefix starts every decoded cursor, so that a cursor from elsewhere
// is refused rather than misread.
const cursorPrefix = "before:"

// ParseExecutionQuery turns the query of GET /v1/executions into a filter:
// run, tool, code (exact matches), since (inclusive) and until (exclusive)
// as RFC 3339 times, limit (1 to MaxListLimit, default DefaultListLimit)
// and cursor (a next_cursor of an earlier answer). It returns every problem
// it finds, each naming the parameter. The filter's Owner is left to the
// caller.
func ParseExecutionQuery(q url.Values) (types.ExecutionFilter, error) {
	f := types.ExecutionFilter{RunID: q.Get("run"), Tool: q.Get("tool"), Code: types.Code(q.Get("code")), Limit: DefaultListLimit}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	f.Limit = parseLimit(q, bad)
	checkCode("code", f.Code, bad)
	parseTime := func(name string, dst *time.Time) {
		v := q.Get(name)
		if v == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			bad("%s %q is not an RFC 3339 time (like 2026-12-01T09:00:00Z)", name, clip(v))
			return
		}
		*dst = t
	}
	parseTime("since", &f.Since)
	parseTime("until", &f.Until)
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		bad("since %s is not before until %s", q.Get("since"), q.Get("until"))
	}
	if v := q.Get("cursor"); v != "" {
		id, ok := decodeCursor(v)
		if !ok {
			bad("cursor %q is not a next_cursor of this endpoint; pass next_cursor as it came", clip(v))
		}
		f.BeforeID = id
	}
	if len(problems) > 0 {
		return f, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return f, nil
}

// encodeCursor is the next_cursor after a page whose last (oldest) row has
// id: the next page holds the rows below it.
func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(id, 10)))
}

// decodeCursor reads a cursor of encodeCursor.
func decodeCursor(c string) (int64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	digits, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id < 1 {
		return 0, false
	}
	return id, true
}

// parseLimit reads a list's limit parameter: 1 to MaxListLimit, default
// DefaultListLimit; anything else is a problem told to bad.
func parseLimit(q url.Values, bad func(format string, args ...any)) int {
	v := q.Get("limit")
	if v == "" {
		return DefaultListLimit
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxListLimit {
		bad("limit %q must be a whole number from 1 to %d", clip(v), MaxListLimit)
		return DefaultListLimit
	}
	return n
}

// checkCode tells bad when the parameter name holds something that is not
// the shape of an outcome code.
func checkCode(name string, code types.Code, bad func(format string, args ...any)) {
	if code != "" && !codeShape.MatchString(string(code)) {
		bad("%s %q is not an outcome code (lowercase letters, digits and _, like ok or upstream_error)", name, clip(string(code)))
	}
}
