package types

// Code is a stable, machine-readable outcome code. The zero value is never
// used on a result; a successful call has the code CodeOK in its execution row
// and no error in its envelope.
type Code string

// Outcome codes. The strings are stable and never change; docs/errors.md
// says what each means and what the model is told to do.
const (
	CodeOK                    Code = "ok"
	CodeUnknownTool           Code = "unknown_tool"
	CodeMissingArguments      Code = "missing_arguments"
	CodeUnknownArguments      Code = "unknown_arguments"
	CodeWrongType             Code = "wrong_type"
	CodeInvalidArgument       Code = "invalid_argument"
	CodeForbidden             Code = "forbidden"
	CodeNotOwner              Code = "not_owner"
	CodeConnectFailed         Code = "connect_failed"
	CodeConnectTimeout        Code = "connect_timeout"
	CodeTimeoutUnknownOutcome Code = "timeout_unknown_outcome"
	// CodeTimeout is a read or idempotent tool's answer not arriving in time:
	// safe to repeat (an extension of the contract's list).
	CodeTimeout             Code = "timeout"
	CodeUnknownOutcome      Code = "unknown_outcome"
	CodeRateLimited         Code = "rate_limited"
	CodeUpstreamError       Code = "upstream_error"
	CodeRejected            Code = "rejected"
	CodeCircuitOpen         Code = "circuit_open"
	CodeDuplicateInFlight   Code = "duplicate_in_flight"
	CodeIdempotencyConflict Code = "idempotency_conflict"
	CodeApprovalRequired    Code = "approval_required"
	CodeApprovalDenied      Code = "approval_denied"
	CodeStepBudgetExhausted Code = "step_budget_exhausted"
	CodeInternalError       Code = "internal_error"
	// CodeInvalidOutput is a tool's answer that does not match its
	// output_schema: not returned as data (strict clients would reject
	// it); the action itself was carried out (an extension of the
	// contract's list).
	CodeInvalidOutput Code = "invalid_output"
	// CodeQuotaExceeded: a quota (shared across runs, over a window) would
	// be exceeded; nothing was done.
	CodeQuotaExceeded Code = "quota_exceeded"
	// CodeRunBusy: another call of the run that reads or changes its state
	// was still in flight at this call's deadline; nothing was done, and
	// repeating the call later is safe (an extension of the contract).
	CodeRunBusy Code = "run_busy"
	// CodeStoreUnavailable: toolgate's own store (its database or disk)
	// could not take the call's admission in time; nothing was done and
	// nothing was sent, and repeating the call later is safe
	// (docs/errors.md).
	CodeStoreUnavailable Code = "store_unavailable"

	// Gateway refusals, answered with a 4xx/5xx status by the server.
	CodeBadRequest      Code = "bad_request"
	CodeUnauthorized    Code = "unauthorized"
	CodeNotFound        Code = "not_found"
	CodeRunExists       Code = "run_exists"
	CodeBodyTooLarge    Code = "body_too_large"
	CodeUnsupportedType Code = "unsupported_media_type"
	CodeUnavailable     Code = "unavailable"
)

// Retryable reports whether a repeat of the same call may succeed without any
// change by the caller. Only transient dependency failures are retryable;
// a rule code (a Code not listed here) is not.
func (c Code) Retryable() bool {
	switch c {
	case CodeConnectFailed, CodeConnectTimeout, CodeRateLimited, CodeUpstreamError, CodeTimeout, CodeRunBusy, CodeStoreUnavailable:
		return true
	}
	return false
}

// Effect says whether repeating a tool's action is safe.
type Effect string

// The three effects. A tool whose effect is not declared is a write: the safe
// assumption.
const (
	EffectRead       Effect = "read"
	EffectIdempotent Effect = "idempotent"
	EffectWrite      Effect = "write"
)

// SafeToRepeat reports whether running the action twice leaves the same end
// state as running it once.
func (e Effect) SafeToRepeat() bool { return e == EffectRead || e == EffectIdempotent }

// SideEffect says what the world holds after a call.
type SideEffect string

// The three side-effect states (docs/http-api.md, "The result envelope").
const (
	SideEffectNone      SideEffect = "none"
	SideEffectCommitted SideEffect = "committed"
	SideEffectUnknown   SideEffect = "unknown"
)

// Next is the machine-readable advice of an observation.
type Next string

// The advice values of meta.next (docs/errors.md).
const (
	NextContinue     Next = "continue"
	NextFixArgs      Next = "fix_args"
	NextRetry        Next = "retry"
	NextWait         Next = "wait"
	NextVerify       Next = "verify"
	NextUseOtherTool Next = "use_other_tool"
	NextEscalate     Next = "escalate"
	NextStop         Next = "stop"
)
