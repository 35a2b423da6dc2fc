package types

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Result is the one envelope every call returns, on every path: success,
// refusal, dependency failure, panic. Data is kept as raw JSON so that numbers
// pass through exactly.
type Result struct {
	OK   bool            `json:"ok"`
	Data json.RawMessage `json:"data"`
	// Content is the content blocks of an MCP tool's answer (text, image,
	// audio, resource_link, resource), as the server sent them, when it
	// sent any; absent for every other tool.
	Content     json.RawMessage `json:"content,omitempty"`
	Error       *Error          `json:"error"`
	Meta        Meta            `json:"meta"`
	Observation string          `json:"observation"`
}

// Code is the outcome code of the result: CodeOK on success.
func (r *Result) Code() Code {
	if r.OK || r.Error == nil {
		return CodeOK
	}
	return r.Error.Code
}

// The constructors of a Result, one per way a call ends; stage 4 of the
// pipeline (package normalise) then settles what the result says of the
// world (meta.side_effect).

var null = json.RawMessage("null")

// OK returns a successful result carrying data.
func OK(data json.RawMessage, meta Meta) *Result {
	if len(data) == 0 {
		data = null
	}
	return &Result{OK: true, Data: data, Meta: meta}
}

// Fail returns a failed result with the given code and message.
func Fail(code Code, message string, meta Meta) *Result {
	return &Result{OK: false, Data: null, Error: NewError(code, message), Meta: meta}
}

// Panic returns the internal_error result for a recovered panic. The value
// is named by its type only: never a stack trace or a message that may hold
// secrets.
func Panic(v any, meta Meta) *Result {
	return Fail(CodeInternalError, fmt.Sprintf("toolgate failed while handling this call (%T). It has been logged; do not retry the same call, escalate.", v), meta)
}

// Data makes valid JSON of a dependency's answer: JSON passes through, an
// empty body is null, anything else (a bare string, HTML, bytes) becomes a
// JSON string, so the envelope is always valid JSON.
func Data(body []byte) json.RawMessage {
	if len(body) == 0 {
		return null
	}
	if json.Valid(body) {
		return json.RawMessage(body)
	}
	s := string(body)
	if !utf8.ValidString(s) {
		s = fmt.Sprintf("<%d bytes of binary data>", len(body))
	}
	b, _ := json.Marshal(s)
	return b
}

// Error is the error part of a Result.
type Error struct {
	Code      Code   `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Error implements the error interface.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// NewError returns an Error whose Retryable flag follows the code.
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message, Retryable: code.Retryable()}
}

// Meta carries the facts about a call that a program (not the model) reads.
type Meta struct {
	RunID          string     `json:"run_id"`
	Step           int64      `json:"step"`
	Tool           string     `json:"tool"`
	CallID         string     `json:"call_id"`
	Dependency     string     `json:"dependency,omitempty"`
	Attempts       int        `json:"attempts"`
	ElapsedMS      int64      `json:"elapsed_ms"`
	IdempotencyKey string     `json:"idempotency_key"`
	Replayed       bool       `json:"replayed"`
	Verified       bool       `json:"verified"`
	SideEffect     SideEffect `json:"side_effect"`
	Next           Next       `json:"next"`
	// RetryAfterMS is set with Next == NextWait: come back no sooner.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	// VerifyWith names the read tool to use when Next == NextVerify.
	VerifyWith string `json:"verify_with,omitempty"`
	// ApprovalID names the pending approval when the code is approval_required.
	ApprovalID string `json:"approval_id,omitempty"`
	// CompletedAt is when a replayed operation first completed.
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	// Omitted says what the observation left out, or is nil.
	Omitted *Omitted `json:"omitted"`
}

// Omitted describes what an observation left out of the data.
type Omitted struct {
	// Shown and Total count list items, when the cut was made on a list.
	Shown int `json:"shown,omitempty"`
	Total int `json:"total,omitempty"`
	// ShownBytes and TotalBytes measure the cut when it was made on text.
	ShownBytes int `json:"shown_bytes,omitempty"`
	TotalBytes int `json:"total_bytes,omitempty"`
	// Depth, when set, is how deep the dependency's JSON answer was nested,
	// past the limit: data then carries the answer's text as a JSON string,
	// so that a client's JSON decoder is not made to recurse that deep.
	Depth int `json:"depth,omitempty"`
	// Field names the list that was shortened, when there was one ("refunds").
	Field string `json:"field,omitempty"`
}
