// Package pipeline composes the seven stages into one call path. It is the
// only package that knows their order; a call runs through it top to
// bottom like the list, and each line names where its stage happens:
//
//	   Call, CallRun   call.go       read the run; callRun starts the call's
//	                                 flight (flight.go), then run (1-3) and
//	                                 finish (4-7)
//	1  validate        validate.go   judge: shape, types, constraints,
//	                                 permission, rules (package validate),
//	                                 then the step budget; approve: a rule
//	                                 that asks for a person; checkOwner:
//	                                 ownership last (validate.CheckOwner,
//	                                 read by reader), bounded by the call's
//	                                 total timeout
//	   admission       admission.go  admit: admissionFor decides, once, how
//	                                 the call takes its step; takeStepFirst
//	                                 takes it on its own; refused answers a
//	                                 refusal once its step is taken;
//	                                 awaitRecords: a repeat waits for the
//	                                 records an earlier call of it kept;
//	                                 admitLimited: step, state-writer slot,
//	                                 operation and quotas in one write
//	2  execute         ledger.go     beginWrite, begin: a write's intent is
//	                                 durable before its first attempt;
//	                                 existing: a repeat replays, conflicts,
//	                                 waits or verifies
//	                   attempt.go    execute, attempts: the breaker, then
//	                                 send, per attempt, under its span
//	                                 (lookup, reader: the same for the
//	                                 reads that validate judges)
//	3  retry           attempt.go    again: only when the failure is transient
//	                                 AND repeating is safe (retry.Decide), within
//	                                 the retry budget; failed: the last
//	                                 failure's answer
//	                   verify.go     unsettled: what a failure means for a
//	                                 write's operation; unknownOutcome,
//	                                 settleByVerify: a write whose outcome is
//	                                 unknown, by its verify read;
//	                                 checkResent: a write sent again
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
// Beside the call: pipeline.go (New and its Config), reload.go (Reload,
// SetTools: the configuration a call is admitted under and keeps to its
// end), settings.go (the policies' settings from the file's keys),
// outbox.go (records kept until the store takes them), wait.go (a call
// waiting on another: awaitWriter for the run's slot, await for an
// operation in flight),
// trace.go (the tracer, and the call's span: an attempt's and a lookup's
// spans are opened beside them, in attempt.go),
// reconcile.go (Reconcile: operations left unknown, settled), readtools.go
// (the read tools an observation suggests), upstream.go (Read: an
// upstream's reads that are not tool calls).
//
// Resilience order, outside in: the call deadline, then the retry loop, then
// the circuit breaker around each attempt, then the attempt's own connect and
// read timeouts. The breaker is inside the retry loop, so a breaker that opens
// mid-call stops the retries at once, and every attempt is counted by it.
//
// # The run's state-writer slot
//
// A rule that reads the run's state is a read followed, much later, by a
// write: between the two, other calls of the run may commit. So a call of
// a tool that reads or changes state (validate.Compiled.StateWriter) holds
// the run's state-writer slot from its admission to its commit. The slot
// is taken by the store in the same durable write that takes the step and
// begins the operation (store.Limiter.Admit), and cleared by the commit
// that settles the call, so the database is the arbiter, across processes
// and replicas.
//
// A call whose rules (owner, verify or quota expressions) read the state
// holds the slot alone (exclusive): at most one such call of a run is in
// flight, and no call that changes the state beside it. A call that only
// updates the state, its rules never reading it, shares the slot with
// others like it: their updates are pure and applied in commit order to
// the newest state, so they may run together, but never beside a call
// being judged against the state.
//
// An exclusive call is judged first against the run it read; the
// admission says the run's version when the slot was taken. If another
// call committed in between, the state may have changed, and the call is
// judged again, now that no call can change the state: a call that then
// fails its rules deletes the operation it began and is answered as
// refused. A call that finds the slot taken waits for it (woken at once by
// a commit in this process; polling the store otherwise) and is then
// judged against the new state; past its bound (see awaitWriter) it
// answers run_busy (nothing done: wait and repeat). Calls that neither
// read nor change the state never touch the slot, nor does a repeat of an
// operation that is started or completed (it waits or replays).
//
// A holder that dies leaves the slot to its lease (the call's deadline
// plus the lease margin, as its operation's) or to AbandonOwner.
package pipeline
