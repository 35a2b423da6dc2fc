package retry

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// failureKinds are the failures the execute stage produces, classified as it
// classifies them, with the expected decision for each effect.
var failureKinds = []struct {
	name    string
	failure Failure
	// retry says whether a second attempt is expected, by effect and by
	// whether the tool's idempotency key header is honoured.
	read, idempotent, writeNoKey, writeWithKey bool
	reason                                     string // the reason when a write without key is refused or retried
}{
	{"connect refused", Failure{Transient: true, Delivered: false}, true, true, true, true, ReasonRetry},
	{"connect timeout", Failure{Transient: true, Delivered: false}, true, true, true, true, ReasonRetry},
	{"read timeout", Failure{Transient: true, Delivered: true}, true, true, false, true, ReasonUnsafeWrite},
	{"reset", Failure{Transient: true, Delivered: true}, true, true, false, true, ReasonUnsafeWrite},
	{"408", Failure{Transient: true, Delivered: false, Status: 408}, true, true, true, true, ReasonRetry},
	{"425", Failure{Transient: true, Delivered: false, Status: 425}, true, true, true, true, ReasonRetry},
	{"429", Failure{Transient: true, Delivered: false, Status: 429}, true, true, true, true, ReasonRetry},
	// A 429 is retried even if some dependency were to report it delivered.
	{"429 delivered", Failure{Transient: true, Delivered: true, Status: 429}, true, true, true, true, ReasonRetry},
	{"500", Failure{Transient: true, Delivered: true, Status: 500}, true, true, false, true, ReasonUnsafeWrite},
	{"502", Failure{Transient: true, Delivered: true, Status: 502}, true, true, false, true, ReasonUnsafeWrite},
	{"503", Failure{Transient: true, Delivered: false, Status: 503}, true, true, true, true, ReasonRetry},
	{"504", Failure{Transient: true, Delivered: true, Status: 504}, true, true, false, true, ReasonUnsafeWrite},
	{"400", Failure{Transient: false, Delivered: true, Status: 400}, false, false, false, false, "not transient: 400"},
	{"404", Failure{Transient: false, Delivered: true, Status: 404}, false, false, false, false, "not transient: 404"},
	{"409", Failure{Transient: false, Delivered: true, Status: 409}, false, false, false, false, "not transient: 409"},
	{"422", Failure{Transient: false, Delivered: true, Status: 422}, false, false, false, false, "not transient: 422"},
	{"panic", Failure{Transient: false, Delivered: true}, false, false, false, false, "not transient"},
}

func TestDecideEffectByFailure(t *testing.T) {
	for _, kind := range failureKinds {
		for _, effect := range []types.Effect{types.EffectRead, types.EffectIdempotent, types.EffectWrite, ""} {
			for _, key := range []bool{false, true} {
				var want bool
				switch effect {
				case types.EffectRead:
					want = kind.read
				case types.EffectIdempotent:
					want = kind.idempotent
				default: // write, and an undeclared effect, which is a write
					want = kind.writeNoKey
					if key {
						want = kind.writeWithKey
					}
				}
				name := fmt.Sprintf("%s/%s/key=%v", kind.name, effect, key)
				t.Run(name, func(t *testing.T) {
					got := Decide(Input{
						Effect:      effect,
						KeyHonoured: key,
						Failure:     kind.failure,
						Attempts:    1,
						Rand:        0.5,
					})
					if got.Retry != want {
						t.Fatalf("Retry = %v (%q), want %v", got.Retry, got.Reason, want)
					}
					if got.Retry && got.Wait != time.Second {
						t.Errorf("Wait = %v, want 1s (base with jitter factor 1)", got.Wait)
					}
					if !got.Retry && got.Wait != 0 {
						t.Errorf("Wait = %v on a refusal, want 0", got.Wait)
					}
					if (effect == types.EffectWrite || effect == "") && !key && got.Reason != kind.reason {
						t.Errorf("Reason = %q, want %q", got.Reason, kind.reason)
					}
				})
			}
		}
	}
}

func TestDecideLimits(t *testing.T) {
	transient := Failure{Transient: true, Delivered: false}
	tests := []struct {
		name string
		in   Input
		want Decision
	}{
		{
			name: "first retry waits the base",
			in:   Input{Effect: types.EffectRead, Failure: transient, Attempts: 1, Rand: 0.5},
			want: Decision{Retry: true, Wait: time.Second, Reason: ReasonRetry},
		},
		{
			name: "third retry doubles twice",
			in:   Input{Effect: types.EffectRead, Failure: transient, Attempts: 3, Rand: 0.5},
			want: Decision{Retry: true, Wait: 4 * time.Second, Reason: ReasonRetry},
		},
		{
			name: "default max attempts reached",
			in:   Input{Effect: types.EffectRead, Failure: transient, Attempts: 4, Rand: 0.5},
			want: Decision{Reason: "max attempts (4) reached"},
		},
		{
			name: "policy max attempts reached",
			in:   Input{Policy: Policy{MaxAttempts: 2}, Effect: types.EffectRead, Failure: transient, Attempts: 2},
			want: Decision{Reason: "max attempts (2) reached"},
		},
		{
			name: "max attempts 1 never retries",
			in:   Input{Policy: Policy{MaxAttempts: 1}, Effect: types.EffectRead, Failure: transient, Attempts: 1},
			want: Decision{Reason: "max attempts (1) reached"},
		},
		{
			name: "retry-after longer than backoff wins",
			in: Input{Effect: types.EffectWrite, Attempts: 1, Rand: 0.5,
				Failure: Failure{Transient: true, Status: 429, RetryAfter: 7 * time.Second}},
			want: Decision{Retry: true, Wait: 7 * time.Second, Reason: ReasonRetry},
		},
		{
			name: "backoff longer than retry-after wins",
			in: Input{Effect: types.EffectWrite, Attempts: 3, Rand: 0.5,
				Failure: Failure{Transient: true, Status: 503, RetryAfter: time.Second}},
			want: Decision{Retry: true, Wait: 4 * time.Second, Reason: ReasonRetry},
		},
		{
			name: "attempt fits before the deadline",
			in: Input{Effect: types.EffectRead, Failure: transient, Attempts: 1, Rand: 0.5,
				Remaining: 5 * time.Second, AttemptTimeout: 4 * time.Second},
			want: Decision{Retry: true, Wait: time.Second, Reason: ReasonRetry},
		},
		{
			name: "attempt would end after the deadline",
			in: Input{Effect: types.EffectRead, Failure: transient, Attempts: 1, Rand: 0.5,
				Remaining: 5 * time.Second, AttemptTimeout: 4*time.Second + 1},
			want: Decision{Reason: ReasonDeadline},
		},
		{
			name: "retry-after beyond the deadline",
			in: Input{Effect: types.EffectRead, Attempts: 1, Rand: 0.5,
				Failure:   Failure{Transient: true, Status: 429, RetryAfter: time.Hour},
				Remaining: time.Minute, AttemptTimeout: time.Second},
			want: Decision{Reason: ReasonDeadline},
		},
		{
			name: "no deadline allows a long retry-after",
			in: Input{Effect: types.EffectRead, Attempts: 1, Rand: 0.5,
				Failure: Failure{Transient: true, Status: 429, RetryAfter: time.Hour}},
			want: Decision{Retry: true, Wait: time.Hour, Reason: ReasonRetry},
		},
		{
			name: "huge cap does not overflow the deadline check",
			in: Input{Policy: Policy{MaxAttempts: 100, Cap: time.Duration(1 << 62)}, Effect: types.EffectRead,
				Failure: transient, Attempts: 90, Rand: 0.999, Remaining: time.Minute, AttemptTimeout: time.Second},
			want: Decision{Reason: ReasonDeadline},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.in); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}
