package breaker

import (
	"fmt"
	"time"
)

// OpenError is Allow's refusal: the dependency's circuit is open (or
// half-open with its one probe in flight), so nothing was sent.
type OpenError struct {
	// Dependency is the breaker's name.
	Dependency string
	// Failures is the run of consecutive failures that opened it.
	Failures int
	// RetryIn is how long until a probe may be sent; 0 while a probe is in
	// flight.
	RetryIn time.Duration
	// ProbeInFlight is true when the breaker is half-open and its one probe
	// has not finished yet.
	ProbeInFlight bool
}

// Error reads, for example, "payments failed 5 times in a row; circuit open,
// next try allowed in 42s". Seconds are rounded up, so a model told to wait
// that long finds the breaker ready.
func (e *OpenError) Error() string {
	if e.ProbeInFlight {
		return fmt.Sprintf("%s failed %s in a row; circuit half-open, a probe is in flight, next try allowed when it finishes",
			e.Dependency, times(e.Failures))
	}
	return fmt.Sprintf("%s failed %s in a row; circuit open, next try allowed in %ds",
		e.Dependency, times(e.Failures), e.RetryInSeconds())
}

// times writes a count of failures: "1 time", "5 times".
func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

// RetryInSeconds is RetryIn rounded up to whole seconds.
func (e *OpenError) RetryInSeconds() int64 {
	return int64((e.RetryIn + time.Second - 1) / time.Second)
}
