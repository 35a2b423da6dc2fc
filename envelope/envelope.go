// Package envelope is stage 4 of the pipeline: it turns whatever happened
// (data, a refusal, a dependency failure, a panic) into the one result shape
// of docs/http-api.md ("The result envelope").
//
// The envelope is built once per call, here; the observation text and the
// advice (meta.next) are added by package observe.
package envelope

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/toolgate/toolgate/types"
)

var null = json.RawMessage("null")

// OK returns a successful result carrying data.
func OK(data json.RawMessage, meta types.Meta) *types.Result {
	if len(data) == 0 {
		data = null
	}
	return &types.Result{OK: true, Data: data, Meta: meta}
}

// Fail returns a failed result with the given code and message.
func Fail(code types.Code, message string, meta types.Meta) *types.Result {
	return &types.Result{OK: false, Data: null, Error: types.NewError(code, message), Meta: meta}
}

// Panic returns the internal_error result for a recovered panic. The value
// is named by its type only: never a stack trace or a message that may hold
// secrets.
func Panic(v any, meta types.Meta) *types.Result {
	return Fail(types.CodeInternalError, fmt.Sprintf("toolgate failed while handling this call (%T). It has been logged; do not retry the same call, escalate.", v), meta)
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

// SideEffect says what the world holds after a call of a tool with the given
// effect ended with code. delivered is false only when the request was
// proven never to have reached the dependency (or the dependency declined to
// process it).
func SideEffect(effect types.Effect, code types.Code, delivered bool) types.SideEffect {
	if code == types.CodeOK || code == types.CodeInvalidOutput {
		if effect == types.EffectRead {
			return types.SideEffectNone
		}
		return types.SideEffectCommitted
	}
	if effect == types.EffectRead {
		return types.SideEffectNone
	}
	switch code {
	case types.CodeTimeoutUnknownOutcome, types.CodeUnknownOutcome, types.CodeDuplicateInFlight:
		return types.SideEffectUnknown
	case types.CodeUpstreamError, types.CodeInternalError, types.CodeTimeout:
		if delivered {
			return types.SideEffectUnknown
		}
	}
	return types.SideEffectNone
}

// Settle fills in meta.side_effect from the tool's effect and the outcome,
// and clears error.retryable when repeating could act twice: a failure whose
// outcome is unknown is never advertised as retryable.
func Settle(res *types.Result, effect types.Effect, delivered bool) {
	res.Meta.SideEffect = SideEffect(effect, res.Code(), delivered)
	if res.Error != nil && res.Meta.SideEffect == types.SideEffectUnknown && !effect.SafeToRepeat() {
		res.Error.Retryable = false
	}
}
