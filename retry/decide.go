package retry

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Failure is what Decide needs to know about a failed attempt. The execute
// stage classifies it (execute.Failure.RetryFailure builds one).
type Failure struct {
	// Transient is true when the same attempt may succeed later: connect
	// failures, read timeouts, resets, 408, 425, 429, 500, 502, 503, 504.
	Transient bool
	// Delivered is false only when non-delivery is proven (the request never
	// reached the dependency, or the dependency declined to process it).
	Delivered bool
	// Status is the HTTP status, or 0 when there was no answer.
	Status int
	// RetryAfter is the dependency's Retry-After, or 0.
	RetryAfter time.Duration
}

// Input is everything Decide looks at.
type Input struct {
	// Policy is the tool's retry policy; zero fields mean the defaults.
	Policy Policy
	// Effect is the tool's effect; "" is treated as write.
	Effect types.Effect
	// KeyHonoured is true when the tool sends its operation key in a header
	// the dependency honours, so a repeat cannot act twice.
	KeyHonoured bool
	// Failure is the last attempt's failure.
	Failure Failure
	// Attempts is the number of attempts made so far (>= 1).
	Attempts int
	// Remaining is the time left before the call's deadline; <= 0 means the
	// call has no deadline.
	Remaining time.Duration
	// AttemptTimeout is how long one more attempt may take (connect + read).
	AttemptTimeout time.Duration
	// Rand is the jitter draw in [0, 1).
	Rand float64
}

// Decision is Decide's answer.
type Decision struct {
	// Retry is true when another attempt should be made.
	Retry bool
	// Wait is how long to wait before it; set only when Retry is true.
	Wait time.Duration
	// Reason is one short phrase for logs and observations.
	Reason string
}

// The reasons Decide gives, for callers that match on them.
const (
	ReasonRetry        = "transient and safe"
	ReasonUnsafeWrite  = "write with unknown outcome and no honoured key"
	ReasonDeadline     = "next attempt would not finish before the deadline"
	ReasonBudget       = "retry budget exhausted"
	reasonNotTransient = "not transient"
)

// Decide says whether to make another attempt after a failed one. It is a
// pure function: it does not consult the retry budget (the caller does so
// after a positive decision, and reports ReasonBudget when it refuses).
//
// The checks run in this order: the failure must be transient; repeating must
// be safe (read or idempotent effect, proven non-delivery, a 429, or an
// honoured key); attempts must remain; and the wait plus one more attempt must
// fit in the remaining time.
func Decide(in Input) Decision {
	p := in.Policy.withDefaults()
	f := in.Failure

	if !f.Transient {
		if f.Status != 0 {
			return Decision{Reason: fmt.Sprintf("%s: %d", reasonNotTransient, f.Status)}
		}
		return Decision{Reason: reasonNotTransient}
	}
	safe := in.Effect.SafeToRepeat() || !f.Delivered || f.Status == 429 || in.KeyHonoured
	if !safe {
		return Decision{Reason: ReasonUnsafeWrite}
	}
	if in.Attempts >= p.MaxAttempts {
		return Decision{Reason: fmt.Sprintf("max attempts (%d) reached", p.MaxAttempts)}
	}
	wait := max(Backoff(p, in.Attempts, in.Rand), f.RetryAfter)
	// Written as a subtraction so that a huge wait cannot overflow.
	if in.Remaining > 0 && wait > in.Remaining-in.AttemptTimeout {
		return Decision{Reason: ReasonDeadline}
	}
	return Decision{Retry: true, Wait: wait, Reason: ReasonRetry}
}
