package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Source says how a report's figures were computed.
type Source string

// The two sources.
const (
	// SourceRows: exactly, from the execution rows of the window.
	SourceRows Source = "rows"
	// SourceSketch: from the merged per-bucket sketches (percentiles
	// within RelativeAccuracy).
	SourceSketch Source = "sketch"
)

// The percentile methods a Report names.
const (
	// MethodRows: nearest-rank over the exact latencies of the calls that
	// reached their dependency.
	MethodRows = "nearest-rank"
	// MethodSketch: nearest-rank over the merged sketches, each
	// percentile within RelativeAccuracy of the true one.
	MethodSketch = "nearest-rank (sketch, within 1%)"
)

// MinSuggestAttempts is how many attempts a tool needs before a timeout is
// suggested from its latencies: below it the p99 says too little.
const MinSuggestAttempts = 20

// PressureRatio is how close p95 may come to the read timeout before
// timeout_pressure is raised: p95 >= 0.8 × timeout.
const PressureRatio = 0.8

// Headroom is what the suggested timeout adds to the observed p99 (50%).
const Headroom = 0.5

// Figures are the monitoring figures of one tool or one dependency over a
// window (GET /v1/stats in docs/http-api.md).
type Figures struct {
	// Calls counts every call: successes, failures, refusals and replays.
	Calls int64 `json:"calls"`
	// Errors counts the calls with ok=false: Refused plus
	// DependencyErrors plus failures replayed from the ledger.
	Errors int64 `json:"errors"`
	// ErrorRate is Errors / Calls.
	ErrorRate float64 `json:"error_rate"`
	// Refused counts the calls toolgate answered without sending anything
	// (validation, permission, rule, approval, quota, unknown tool, an
	// open breaker). They are neither latency samples nor dependency
	// errors.
	Refused int64 `json:"refused"`
	// RefusedRate is Refused / Calls.
	RefusedRate float64 `json:"refused_rate"`
	// RefusedCodes counts the refusals by code.
	RefusedCodes map[types.Code]int64 `json:"refused_codes"`
	// DependencyErrors counts the calls that reached the dependency (at
	// least one attempt) and failed.
	DependencyErrors int64 `json:"dependency_errors"`
	// DependencyErrorRate is DependencyErrors / Samples: the share of the
	// calls that reached the dependency that failed there.
	DependencyErrorRate float64 `json:"dependency_error_rate"`
	// Samples counts the calls that reached the dependency: the
	// latencies the percentiles are taken over.
	Samples int64 `json:"samples"`
	// Retried counts the calls that took more than one attempt.
	Retried int64 `json:"retried"`
	// RetryRate is Retried / Calls.
	RetryRate float64 `json:"retry_rate"`
	// Retries is the total of retries (attempts after the first).
	Retries int64 `json:"retries"`
	// Attempts is the total of attempts sent to the dependency.
	Attempts int64 `json:"attempts"`
	// P50MS, P95MS and P99MS are latency percentiles in milliseconds.
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
	P99MS float64 `json:"p99_ms"`
	// TimeoutMS is the tool's read timeout; 0 (omitted) for a dependency,
	// whose tools may each have their own, and for a tool the config no
	// longer has.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// TimeoutPressure is true when p95 >= 0.8 × TimeoutMS.
	TimeoutPressure bool `json:"timeout_pressure"`
	// SuggestedTimeoutMS is SuggestTimeout(P99MS); 0 below
	// MinSuggestAttempts attempts.
	SuggestedTimeoutMS int64 `json:"suggested_timeout_ms"`
	// SuggestedTimeoutNote says why there is no suggestion: "not enough
	// data yet (7 of 20 attempts)". Empty when there is one.
	SuggestedTimeoutNote string `json:"suggested_timeout_note,omitempty"`
	// Codes counts the calls by outcome code ("ok" for successes).
	Codes map[types.Code]int64 `json:"codes"`
	// InputTokens and OutputTokens are the model's token totals reported
	// with the calls.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// Dependency is a tool's dependency ("" for a dependency's figures).
	Dependency string `json:"dependency,omitempty"`
	// Source says whether the figures are exact (rows) or from sketches.
	Source Source `json:"source"`
}

// newFigures derives the figures from counters and percentiles.
func newFigures(a *aggregate, p50, p95, p99 float64, timeout time.Duration, src Source) *Figures {
	f := &Figures{
		Calls: a.calls, Errors: a.errors, Retried: a.retried, Retries: a.retries, Attempts: a.attempts,
		P50MS: roundMS(p50), P95MS: roundMS(p95), P99MS: roundMS(p99),
		TimeoutMS: timeout.Milliseconds(), Codes: a.codes,
		Refused: a.refused, RefusedCodes: a.refusedCodes, DependencyErrors: a.depErrors, Samples: a.samples,
		InputTokens: a.inputTokens, OutputTokens: a.outputTokens, Source: src,
	}
	if f.Codes == nil {
		f.Codes = map[types.Code]int64{}
	}
	if f.RefusedCodes == nil {
		f.RefusedCodes = map[types.Code]int64{}
	}
	if a.calls > 0 {
		f.ErrorRate = ratio(a.errors, a.calls)
		f.RetryRate = ratio(a.retried, a.calls)
		f.RefusedRate = ratio(a.refused, a.calls)
	}
	f.DependencyErrorRate = ratio(a.depErrors, a.samples)
	f.SuggestedTimeoutMS, f.SuggestedTimeoutNote = suggestion(a.attempts, p99)
	f.TimeoutPressure = Pressure(p95, timeout) && a.samples > 0
	return f
}

// suggestion is the suggested timeout for a p99 over attempts, or why
// there is none.
func suggestion(attempts int64, p99MS float64) (int64, string) {
	if attempts < MinSuggestAttempts {
		return 0, NotEnoughData(attempts)
	}
	return SuggestTimeout(p99MS), ""
}

// NotEnoughData is the note in place of a suggested timeout before
// MinSuggestAttempts attempts: "not enough data yet (7 of 20 attempts)".
func NotEnoughData(attempts int64) string {
	return fmt.Sprintf("not enough data yet (%d of %d attempts)", attempts, MinSuggestAttempts)
}

// ratio is n/d rounded to 4 decimals.
func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(d)*1e4) / 1e4
}

// roundMS rounds a latency to the microsecond.
func roundMS(ms float64) float64 { return math.Round(ms*1000) / 1000 }

// Pressure reports whether a p95 (ms) is within 20% of the read timeout:
// p95 >= 0.8 × timeout. A zero timeout is never under pressure.
func Pressure(p95MS float64, timeout time.Duration) bool {
	if timeout <= 0 {
		return false
	}
	return p95MS >= PressureRatio*float64(timeout.Milliseconds())
}

// SuggestTimeout is the read timeout (ms) the observed p99 (ms) suggests:
// p99 plus 50% headroom, rounded up to a round figure: to the nearest
// 100 ms when that is at most 1 s, to the nearest 500 ms when at most
// 10 s, and to the nearest second above. It is never less than 100 ms.
//
//	p99 240 ms  -> 360 ms   -> 400 ms
//	p99 2.9 s   -> 4.35 s   -> 4.5 s
//	p99 9 s     -> 13.5 s   -> 14 s
func SuggestTimeout(p99MS float64) int64 {
	want := max(p99MS, 0) * (1 + Headroom)
	step := 1000.0
	switch {
	case want <= 1000:
		step = 100
	case want <= 10_000:
		step = 500
	}
	// Subtract a hair first so that float noise (360.00000001) does not
	// round a figure that is already round up by one more step.
	return max(int64(math.Ceil(want/step-1e-9)*step), 100)
}
