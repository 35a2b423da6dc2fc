// Package retry is stage 3 of the toolgate pipeline: after a failed attempt
// it decides whether to try again, and how long to wait first.
//
// Decide is a pure function of its Input: the tool's policy and effect, the
// classified failure, the attempts made, the time left before the call's
// deadline and one random draw for jitter. It does no I/O, reads no clock and
// keeps no state, so every decision can be tested as a table row.
//
// The rules are those of docs/config.md ("Timeouts and retries"). A retry
// needs both:
//
//   - the failure is transient (connect failures, read timeouts, resets,
//     408, 425, 429, 500, 502, 503, 504), and
//   - repeating is safe: the effect is read or idempotent, or the failure
//     proves the request was never delivered, or it is a 429, or the tool
//     sends its operation key in a header the dependency honours.
//
// The wait is the exponential Backoff with jitter, never shorter than the
// dependency's Retry-After, and no attempt starts that could not finish
// before the deadline.
//
// Budget is the one stateful piece: a per-dependency retry budget that keeps
// the retries in flight at one time to a share of the calls active against
// the dependency (with a minimum allowed at a time), so that retries cannot
// turn a slow dependency into a dead one under load, while a caller alone on
// a dependency always gets its configured attempts. The caller consults it
// only after Decide said yes; a retry the budget refuses ends the call with
// its last failure.
package retry
