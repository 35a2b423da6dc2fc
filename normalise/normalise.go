// Package normalise is stage 4 of the pipeline: whatever happened (data, a
// refusal, a dependency failure, a panic) ends in the one result shape of
// docs/http-api.md ("The result envelope"), types.Result, built by the
// constructors beside it in package types (types.OK, types.Fail,
// types.Panic, types.Data). This package holds the stage's own decisions:
// what the world holds after the call (SideEffect) and whether the
// failure may be advertised as retryable (Settle).
//
// The observation text and the advice (meta.next) are added by package
// feedback, stage 5.
package normalise

import "github.com/toolgate/toolgate/types"

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
