// Package pipeline composes the seven stages into one call path. It is the
// only package that knows their order; a call runs through it top to
// bottom like the list, and each line names where its stage happens:
//
//	   Call, CallRun   call.go       read the run; callRun starts the call's
//	                                 flight (flight.go), then run (1-3) and
//	                                 finish (4-7)
//	1  validate        judge.go      judge: shape, types, constraints,
//	                                 permission, rules (validate), then
//	                   approval.go   approve: a rule that asks for a person
//	                   lookup.go     checkOwner: ownership last, bounded by the
//	                                 call's total timeout
//	   admission       admission.go  admissionFor decides, once, how the call
//	                                 takes its step (an admission);
//	                                 takeStepFirst takes it on its own
//	                   stateslot.go  admitLimited: step, state-writer slot,
//	                                 operation and quotas in one write
//	2  execute         ledger.go     begin (from call.go beginWrite): a write's
//	                                 intent is durable before its first
//	                                 attempt; a repeat replays, conflicts,
//	                                 waits or verifies
//	                   attempt.go    attempts (from call.go execute): the
//	                                 breaker, then send, per attempt
//	3  retry           attempt.go    again: only when the failure is transient
//	                                 AND repeating is safe (retry.Decide), within
//	                                 the retry budget; failed: the last
//	                                 failure's answer
//	                   lookup.go     unknownOutcome, settleByVerify: a write
//	                                 whose outcome is unknown, by its verify read
//	4  normalise       finish.go     normalise: one result shape (types.Result),
//	                                 whatever happened; its side effect
//	                                 (normalise)
//	5  feedback        finish.go     feedback: the observation, meta.next,
//	                                 what was left out (feedback)
//	6  monitor         commit.go     row: one execution row per call (monitor);
//	                                 the sinks see it once committed
//	7  update state    commit.go     stateUpdate computes the pure update
//	                                 before 5, which reports when it is left
//	                                 out; commit writes it with the row and the
//	                                 ledger's settlement in ONE transaction
//
// finish runs 4 to 7 in that order (record), then frees the state-writer
// slot, wakes the waiters of the operation and logs the call (log.go).
//
// Resilience order, outside in: the call deadline, then the retry loop, then
// the circuit breaker around each attempt, then the attempt's own connect and
// read timeouts. The breaker is inside the retry loop, so a breaker that opens
// mid-call stops the retries at once, and every attempt is counted by it.
package pipeline
