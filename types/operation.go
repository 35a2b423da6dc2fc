package types

import (
	"encoding/json"
	"time"
)

// OpStatus is the state of an operation in the ledger.
//
//	(none) --Begin--> started --answer--> completed
//	                     |--unknown-->  unknown --verify found--> completed
//	                     '--owner dead------^  \--verify not found--> unknown
type OpStatus string

// The operation statuses.
const (
	OpStarted   OpStatus = "started"
	OpCompleted OpStatus = "completed"
	OpUnknown   OpStatus = "unknown"
)

// Operation is the ledger record of one write: the arbiter of "exactly once".
type Operation struct {
	Key      string `json:"key"`
	ArgsHash string `json:"args_hash"`
	// Args are the operation's canonical arguments, kept so that a verify
	// read can be built for it later (toolgate reconcile) even when the
	// call that began it never committed (a crash).
	Args   json.RawMessage `json:"args,omitempty"`
	RunID  string          `json:"run_id"`
	Tool   string          `json:"tool"`
	Status OpStatus        `json:"status"`
	// Result is the envelope of the call that completed the operation.
	Result json.RawMessage `json:"result,omitempty"`
	// Owner names the process executing a started operation.
	Owner string `json:"owner,omitempty"`
	// LeaseUntil is when a started operation's owner is presumed dead.
	LeaseUntil  time.Time `json:"lease_until"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
}
