package monitor

import "github.com/toolgate/toolgate/types"

// Class is what became of a call, for the split of its error rate.
type Class string

// The classes of calls.
const (
	// ClassOK: the call succeeded (a replay of a success included).
	ClassOK Class = "ok"
	// ClassRefused: toolgate answered the call without sending anything
	// (validation, permission, rule, approval, quota, unknown tool, an
	// open breaker): not a latency sample, not a dependency error.
	ClassRefused Class = "refused"
	// ClassDependencyError: at least one attempt reached the dependency
	// and the call failed.
	ClassDependencyError Class = "dependency_error"
	// ClassReplayedError: a failure answered from the ledger, a replay of
	// an earlier call's outcome; nothing was sent.
	ClassReplayedError Class = "replayed_error"
)

// ClassOf is the class of an execution row: ok; else a failure with an
// attempt is the dependency's, a replayed one is a replay, and one without
// any attempt is a refusal by toolgate.
func ClassOf(row *types.Execution) Class {
	switch {
	case row.OK:
		return ClassOK
	case row.Attempts > 0:
		return ClassDependencyError
	case row.Replayed:
		return ClassReplayedError
	}
	return ClassRefused
}
