package execute

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/types"
)

// Kind is what went wrong in a failed attempt.
type Kind int

// The kinds of failure. The zero Kind is not used.
const (
	// KindConnectRefused: the dependency refused the connection.
	KindConnectRefused Kind = iota + 1
	// KindConnectTimeout: no connection (TCP and TLS) within the connect
	// timeout.
	KindConnectTimeout
	// KindConnectFailed: DNS, TLS or another dial error, or the connection
	// closed before the request could be written.
	KindConnectFailed
	// KindReadTimeout: no whole answer within the read timeout after the
	// request was written.
	KindReadTimeout
	// KindReset: the connection broke after the request was written.
	KindReset
	// KindStatus: the dependency answered with a non-2xx status.
	KindStatus
	// KindCanceled: the caller's context ended; not the dependency's fault.
	KindCanceled
	// KindPanic: a Go-function tool panicked.
	KindPanic
	// KindFuncError: a Go-function tool returned an error.
	KindFuncError
	// KindTooLarge: the answer was bigger than HTTPOptions.MaxResponseBytes.
	KindTooLarge
	// KindInvalidRequest: the request could not be built (a path argument is
	// missing, the base URL is malformed, ...); nothing was sent.
	KindInvalidRequest
	// KindToolError: the tool answered that it failed (an MCP result with
	// isError, or a JSON-RPC error in answer to tools/call).
	KindToolError
)

var kindNames = map[Kind]string{
	KindConnectRefused: "connect_refused",
	KindConnectTimeout: "connect_timeout",
	KindConnectFailed:  "connect_failed",
	KindReadTimeout:    "read_timeout",
	KindReset:          "reset",
	KindStatus:         "status",
	KindCanceled:       "canceled",
	KindPanic:          "panic",
	KindFuncError:      "func_error",
	KindTooLarge:       "too_large",
	KindInvalidRequest: "invalid_request",
	KindToolError:      "tool_error",
}

// String returns the kind's snake_case name, such as "connect_refused".
func (k Kind) String() string {
	if name, ok := kindNames[k]; ok {
		return name
	}
	return "unknown"
}

// MarshalText writes the kind's String form.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Failure is a failed attempt, classified.
type Failure struct {
	// Kind is what went wrong.
	Kind Kind
	// Delivered is false ONLY when non-delivery is proven: refused, connect
	// timeout, DNS/TLS/dial failure, and statuses 408, 425, 429 and 503 (the
	// server declined to process). True means the dependency may have acted:
	// for a write the outcome is unknown unless it answered.
	Delivered bool
	// Transient is true when the same attempt may succeed later.
	Transient bool
	// Status is the HTTP status when the dependency answered, else 0.
	Status int
	// RetryAfter is the dependency's Retry-After on 429 and 503 (or a
	// FuncError's RetryAfter).
	RetryAfter time.Duration
	// Data is the error body (JSON, or the body as a JSON string) when the
	// dependency answered.
	Data json.RawMessage
	// Message is one human line, such as "payments answered 503 Service
	// Unavailable: down for maintenance".
	Message string
	// Code is the contract code this failure maps to if it is the last one:
	// connect_failed (refused, DNS, TLS, dial), connect_timeout,
	// timeout_unknown_outcome (read timeout or reset, whatever the effect:
	// the pipeline adjusts it for reads), rate_limited (429), upstream_error
	// (5xx, other unexpected statuses, too_large), rejected (other 4xx),
	// internal_error (panic, invalid_request), a FuncError's own code. A
	// caller's cancellation maps to timeout_unknown_outcome when the request
	// may have been sent and to unavailable when it was not.
	Code types.Code
	// Err is the underlying error, if any.
	Err error
}

// Error returns the Message.
func (f *Failure) Error() string {
	if f.Message != "" {
		return f.Message
	}
	if f.Err != nil {
		return f.Kind.String() + ": " + f.Err.Error()
	}
	return f.Kind.String()
}

// Unwrap returns the underlying error.
func (f *Failure) Unwrap() error { return f.Err }

// Unhealthy says whether the failure speaks against the dependency's
// health, for its circuit breaker to count: transient failures and panics
// do (a tool that keeps panicking is unhealthy too); the caller's
// cancellation, permanent answers (4xx) and requests that could not be
// built say nothing.
func (f *Failure) Unhealthy() bool {
	switch {
	case f.Kind == KindCanceled || f.Kind == KindInvalidRequest:
		return false
	case f.Transient || f.Kind == KindPanic:
		return true
	}
	return false
}

// statusFailure classifies a non-2xx answer. body is the (bounded) response
// body; now is the clock's time, for a Retry-After given as an HTTP-date.
func statusFailure(dependency string, status int, header http.Header, body []byte, now time.Time) *Failure {
	f := &Failure{Kind: KindStatus, Status: status, Delivered: true, Data: bodyData(body)}
	switch {
	case status == http.StatusTooManyRequests:
		f.Delivered, f.Transient, f.Code = false, true, types.CodeRateLimited
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly, status == http.StatusServiceUnavailable:
		f.Delivered, f.Transient, f.Code = false, true, types.CodeUpstreamError
	case status == http.StatusInternalServerError, status == http.StatusBadGateway, status == http.StatusGatewayTimeout:
		f.Transient, f.Code = true, types.CodeUpstreamError
	case status >= 400 && status < 500:
		f.Code = types.CodeRejected
	default: // other 5xx, and 1xx/3xx, which a JSON API should not send
		f.Code = types.CodeUpstreamError
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		f.RetryAfter = parseRetryAfter(header.Get("Retry-After"), now)
	}

	f.Message = fmt.Sprintf("%s answered %d %s", dependency, status, http.StatusText(status))
	if short := shortBody(f.Data); short != "" {
		f.Message += ": " + short
	}
	return f
}

// parseRetryAfter reads a Retry-After value: delta-seconds or an HTTP-date,
// which is taken relative to now. Unparsable or past values give 0.
func parseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.ParseInt(value, 10, 64); err == nil {
		if seconds <= 0 {
			return 0
		}
		// Cap at a day: a larger value is an error, and the product must
		// not overflow.
		return min(time.Duration(seconds), 24*60*60) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil {
		return max(at.Sub(now), 0)
	}
	return 0
}

// MaxDataDepth bounds the nesting of a dependency's JSON answer kept as
// JSON in a result's data; a deeper one is carried as a JSON string.
const MaxDataDepth = 100

// bodyData is a body as JSON: the body itself when it is valid JSON, "null"
// when it is empty, else the body as a JSON string.
func bodyData(body []byte) json.RawMessage {
	data, _ := bodyDataDepth(body)
	return data
}

// bodyDataDepth is bodyData, with the depth of a JSON body nested deeper
// than MaxDataDepth, which it carries as a JSON string (0 otherwise).
func bodyDataDepth(body []byte) (json.RawMessage, int) {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return json.RawMessage("null"), 0
	}
	if json.Valid([]byte(trimmed)) {
		depth := jsonDepth(trimmed)
		if depth <= MaxDataDepth {
			return json.RawMessage(trimmed), 0
		}
		quoted, _ := marshalCanonical(trimmed)
		return quoted, depth
	}
	quoted, _ := marshalCanonical(string(body)) // a string always marshals
	return quoted, 0
}

// jsonDepth is the deepest nesting of arrays and objects in valid JSON.
func jsonDepth(s string) int {
	depth, deepest, in := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// shortBodyRunes bounds the body excerpt in a failure message.
const shortBodyRunes = 200

// shortBody is an excerpt of an error body for a one-line message: the
// string itself, or the message-like field of an object ("message", "error",
// "detail", ...), else the compact JSON; whitespace collapsed, truncated.
func shortBody(data json.RawMessage) string {
	if len(data) == 0 || string(data) == "null" {
		return ""
	}
	text := string(data)
	var s string
	var obj map[string]json.RawMessage
	switch {
	case json.Unmarshal(data, &s) == nil:
		text = s
	case json.Unmarshal(data, &obj) == nil:
		if m := messageField(obj); m != "" {
			text = m
		}
	}
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) > shortBodyRunes {
		runes := []rune(text)
		text = string(runes[:shortBodyRunes]) + "…"
	}
	return text
}

// messageField finds the human message in a JSON error object, one level
// deep: {"message": ...}, {"error": "..."}, {"error": {"message": ...}}.
func messageField(obj map[string]json.RawMessage) string {
	for _, key := range []string{"message", "error_description", "detail", "error", "title", "reason"} {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			if m := messageField(inner); m != "" {
				return m
			}
		}
	}
	return ""
}

// invalidRequest is the failure of a request that could not be built.
func invalidRequest(a *Attempt, why string) *Failure {
	name := "the tool"
	if a != nil && a.Tool != nil && a.Tool.Name != "" {
		name = a.Tool.Name
	}
	return &Failure{
		Kind:    KindInvalidRequest,
		Code:    types.CodeInternalError,
		Message: fmt.Sprintf("cannot build the request for %s: %s", name, why),
	}
}
