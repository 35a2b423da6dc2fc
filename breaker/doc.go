// Package breaker is a small circuit breaker, one per dependency.
//
// A breaker opens after Threshold consecutive failures of its dependency,
// stays open for Cooldown, then lets exactly one probe through (half-open):
// the probe's success closes it, its failure opens it for another cooldown.
// While open, Allow refuses at once with an *OpenError, and nothing is sent.
//
// It is written here rather than wrapping sony/gobreaker, whose ideas it
// keeps (a generation counter so that late results from an earlier state are
// ignored; outcomes that say nothing about the dependency's health, such as
// the caller's own cancellation, are excluded), because toolgate needs three
// things gobreaker does not give cleanly: an injected clock so that tests
// advance time instead of sleeping, and the consecutive failure count and the
// time until the next try, both of which go into the model's observation
// ("payments failed 5 times in a row; circuit open, next try allowed in 42s").
//
// Use:
//
//	ticket, err := b.Allow()
//	if err != nil {
//		return err // an *OpenError: circuit_open
//	}
//	outcome := breaker.Failure // what a panic in the attempt counts as
//	defer func() { b.Done(ticket, outcome) }()
//	resp, failure := executor.Do(ctx, attempt)
//	outcome = ... // Success, Failure or Ignore
//
// Give the ticket back in a defer, as above: a half-open breaker whose probe
// never reports (its attempt panicked) refuses every attempt until it does.
package breaker
