package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// Funcs is the executor of Go-function tools. It calls a.Tool.Func with the
// canonical JSON of the arguments (keys sorted, numbers exact) and encodes
// the value it returns as the response's data; a json.RawMessage passes
// through as is. A panic becomes a failure of kind panic, with no stack trace
// in its message.
type Funcs struct{}

// Do calls the tool's function once.
func (Funcs) Do(ctx context.Context, a *Attempt) (resp *Response, failure *Failure) {
	if a.Tool == nil || a.Tool.Func == nil {
		return nil, invalidRequest(a, "the tool has no Go function")
	}
	args := a.Args
	if args == nil {
		args = map[string]any{}
	}
	encoded := []byte(a.Canonical)
	if encoded == nil {
		var err error
		if encoded, err = marshalCanonical(args); err != nil {
			return nil, invalidRequest(a, "encoding the arguments: "+err.Error())
		}
	}

	defer func() {
		if r := recover(); r != nil {
			resp, failure = nil, panicFailure(a.Tool.Name, r)
		}
	}()
	value, err := a.Tool.Func(ctx, json.RawMessage(encoded))
	if err != nil {
		return nil, funcFailure(ctx, a.Tool.Name, err)
	}

	data, err := encodeValue(value)
	if err != nil {
		return nil, &Failure{
			Kind: KindFuncError, Delivered: true,
			Code:    types.CodeInternalError,
			Message: fmt.Sprintf("%s returned a value that is not JSON: %v", a.Tool.Name, err),
			Err:     err,
		}
	}
	return &Response{Status: 200, Data: data}, nil
}

// encodeValue is a Go tool's value as JSON: a json.RawMessage as is (if it
// is valid JSON), nil as null, anything else through json.Marshal.
func encodeValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		if len(v) == 0 {
			return json.RawMessage("null"), nil
		}
		if !json.Valid(v) {
			return nil, errors.New("invalid json.RawMessage")
		}
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// funcFailure classifies a Go tool's error.
func funcFailure(ctx context.Context, tool string, err error) *Failure {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The tool stopped because the caller's context ended. It may have
		// acted before it noticed.
		return &Failure{
			Kind: KindCanceled, Delivered: true,
			Code:    types.CodeTimeoutUnknownOutcome,
			Message: fmt.Sprintf("the call was cancelled while %s was running (%v)", tool, context.Cause(ctx)),
			Err:     err,
		}
	}
	var fe *config.FuncError
	if errors.As(err, &fe) {
		code := fe.Code
		if code == "" {
			code = types.CodeUpstreamError
		}
		message := fe.Message
		if message == "" {
			message = err.Error()
		}
		notDelivered := code == types.CodeConnectFailed || code == types.CodeConnectTimeout || code == types.CodeRateLimited
		return &Failure{
			Kind:       KindFuncError,
			Delivered:  !notDelivered,
			Transient:  fe.Transient,
			RetryAfter: fe.RetryAfter,
			Code:       code,
			Message:    oneLine(message),
			Err:        err,
		}
	}
	return &Failure{
		Kind: KindFuncError, Delivered: true,
		Code:    types.CodeUpstreamError,
		Message: oneLine(fmt.Sprintf("%s failed: %v", tool, err)),
		Err:     err,
	}
}

// panicFailure is the failure of a Go tool that panicked. The model is told
// only the panic value's type: the value itself (which may hold secrets) stays
// in Err, for the log.
func panicFailure(tool string, recovered any) *Failure {
	return &Failure{
		Kind: KindPanic, Delivered: true,
		Code:    types.CodeInternalError,
		Message: fmt.Sprintf("%s failed inside toolgate's host program (a %T panic); this is a bug in the tool, not in the arguments", tool, recovered),
		Err:     fmt.Errorf("panic: %v", recovered),
	}
}

// maxMessageRunes bounds a one-line message built from a Go error.
const maxMessageRunes = 300

// oneLine keeps the first line of s, bounded: a panic value or error text
// that carries a trace or a dump stays out of the model's view.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if runes := []rune(s); len(runes) > maxMessageRunes {
		s = string(runes[:maxMessageRunes]) + "…"
	}
	return s
}
