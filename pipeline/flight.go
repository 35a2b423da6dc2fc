package pipeline

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// flight is the working state of one call on its way through the stages,
// grouped by the stage that writes each field. Later stages read what
// earlier ones wrote; stages 4 to 7 (finish) write back only what undoes
// an earlier decision: the admission of a call whose step the commit could
// not take, a settlement dropped because the fence was lost
// (fencedSettlement), the slot once released.
type flight struct {
	// The call as it came, and what it was admitted under.
	call      *types.Call
	cfg       *live      // the configuration the call was admitted under, to its end
	run       *types.Run // the run as last read (judge reads it again under the slot)
	keyScope  string     // the run's owner's prefix of its operation and run-local quota keys (types.Run.KeyScope)
	started   time.Time
	traceID   trace.TraceID
	expectKey string // Reconcile: the operation this call may only settle

	// 1 validate (judge, bind, approve, refused).
	checked    *validate.Checked
	spec       *config.Tool
	key        string // the operation key, for a tool that is not a read
	approvalID string
	ruleNext   types.Next

	// Admission (admissionFor, then takeStepFirst, admitLimited or begin).
	admission admission
	step      int64
	holder    string       // the run's state-writer slot, held until the commit
	fence     *store.Fence // the liveness a write was begun under
	deadline  time.Time    // on the pipeline's clock; zero until admitted

	// 2-3 execute and retry (execute, failed, verifyUnknown). A replay
	// and a verified outcome say so in the result they answer.
	attempts  int
	retries   int
	delivered bool             // the last failure may have reached the dependency
	failure   *execute.Failure // the last attempt's, when the call failed on it
	dataDepth int              // an answer nested too deep, carried as text
	execNote  string           // what the executor adds to the observation (execute.Response.Note)
	resent    bool             // a repeat that re-sends an operation of unknown outcome
	doubt     string           // why a re-sent write's answer may not be its only effect
	settled   bool             // the commit settles the write's operation...
	opStatus  types.OpStatus   // ...to this status ("" deletes it: nothing happened)
	// unrecorded: the store did not take the call's records (finish).
	unrecorded bool
	finished   time.Time // when stages 4 to 7 last ran (record)

	// Advice for feedback (5): when the model may try again. Set by the
	// stage that gave the answer.
	wait time.Duration
}

// settle makes the commit record the write's operation as status ("":
// delete it, so that it may run again).
func (f *flight) settle(status types.OpStatus) {
	if f.spec.Effect != types.EffectWrite || f.key == "" {
		return
	}
	f.settled, f.opStatus = true, status
}

// keyHonoured says the dependency dedupes this tool's writes by the
// operation key it is sent.
func (f *flight) keyHonoured() bool { return f.spec.Idempotency.Header != "" && f.key != "" }

// owner is the owner id the call's ledger rows are written under: its
// fence's when it was begun under one.
func (f *flight) owner(p *Pipeline) string {
	if f.fence != nil {
		return f.fence.Owner
	}
	return p.owner
}
