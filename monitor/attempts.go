package monitor

// Purpose says why an attempt was sent to a dependency.
type Purpose string

// The purposes of attempts.
const (
	// PurposeCall is an attempt of the called tool itself.
	PurposeCall Purpose = "call"
	// PurposeOwner is an attempt of a tool's ownership lookup (owner.lookup).
	PurposeOwner Purpose = "owner"
	// PurposeVerify is an attempt of a write's verify read (verify.lookup).
	PurposeVerify Purpose = "verify"
)

// AttemptSink is told of every attempt sent to a dependency as it ends,
// lookups included: the execution row counts only the called tool's own
// attempts. A pipeline sink that also implements it gets both.
type AttemptSink interface {
	// RecordAttempt counts one attempt of tool (the tool whose request was
	// sent: for a lookup, the lookup tool) for purpose.
	RecordAttempt(tool string, purpose Purpose)
}
