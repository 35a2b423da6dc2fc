// Package store defines where toolgate keeps its records: runs, the
// execution log (one row per call) and the operation ledger that makes a
// write happen at most once.
//
// One interface, one package per backend (store/memory, store/sqlite,
// store/postgres), and one conformance suite (store/storetest) that every
// backend passes. The database, not a mutex, is the arbiter of "exactly once":
// an operation key is unique in the ledger.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Sentinel errors every backend returns (wrapped or not) for these conditions.
var (
	// ErrNotFound: no run or operation with that id or key.
	ErrNotFound = errors.New("store: not found")
	// ErrRunExists: CreateRun with an id that is taken.
	ErrRunExists = errors.New("store: run already exists")
	// ErrVersionConflict: a Commit with a state update named a run version
	// that is no longer current. Re-read the run, apply again, commit again.
	ErrVersionConflict = errors.New("store: run version conflict")
	// ErrStepBudget: AdmitStep on a run whose max_steps are all taken.
	ErrStepBudget = errors.New("store: step budget exhausted")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrUnavailable: the store could not be reached, or did not answer
	// within the operation's deadline (a connection refused, reset or
	// silent, a database restarting, a disk full). Wrapped with the
	// cause. A read or an admission that fails so wrote nothing; a write
	// whose request was sent may or may not have been written, and its
	// error says so (see each backend).
	ErrUnavailable = errors.New("store: unavailable")
)

// Store is the durable home of runs, executions, operations, approvals and
// limits. Every method takes ctx first and is safe for concurrent use.
// Every backend implements all of it; what only some backends offer
// (Fencer) is a separate interface, found with As.
type Store interface {
	// CreateRun inserts a new run (Step and Version 0). ErrRunExists if the id
	// is taken.
	CreateRun(ctx context.Context, run *types.Run) error
	// GetRun returns a copy of the run, or ErrNotFound.
	GetRun(ctx context.Context, id string) (*types.Run, error)
	// AdmitStep atomically takes the run's next step number (1, 2, ...).
	// ErrStepBudget when MaxSteps > 0 and all are taken; ErrNotFound when the
	// run does not exist.
	AdmitStep(ctx context.Context, runID string) (int64, error)

	// BeginOperation records op as OpStarted if no operation has its key and
	// returns (nil, true). If the key exists it changes nothing and returns
	// (existing, false): the caller decides (replay, wait, verify, conflict).
	// The record is durable before BeginOperation returns.
	BeginOperation(ctx context.Context, op *types.Operation) (existing *types.Operation, began bool, err error)
	// GetOperation returns the operation with that key, or ErrNotFound.
	GetOperation(ctx context.Context, key string) (*types.Operation, error)
	// ClaimOperation moves an OpUnknown operation back to OpStarted under a
	// new owner and lease, so that exactly one caller re-executes it. It
	// returns false when the operation is not OpUnknown any more.
	ClaimOperation(ctx context.Context, key, owner string, leaseUntil time.Time) (bool, error)
	// ExpireLeases turns every OpStarted operation whose lease ended before
	// now into OpUnknown, and returns how many it turned.
	ExpireLeases(ctx context.Context, now time.Time) (int, error)
	// AbandonOwner turns every OpStarted operation of owner into OpUnknown
	// (crash recovery of a process that restarts under the same owner name,
	// or of every owner when owner is ""). It returns how many it turned.
	AbandonOwner(ctx context.Context, owner string) (int, error)
	// ListOperations returns operations in the given status, oldest first.
	ListOperations(ctx context.Context, status types.OpStatus, limit int) ([]types.Operation, error)

	// Commit writes, in one transaction, the execution row, the operation's
	// new status (if c.Operation is set) and the run's step into history: the
	// run's Version is incremented and, when c.NewState is set, its State
	// replaced, provided the run is still at c.ExpectVersion (else
	// ErrVersionConflict and nothing is written). On success
	// c.Execution.ID and c.Execution.Version are filled in. Nothing is
	// answered before the transaction is durable.
	Commit(ctx context.Context, c *Commit) error

	// ListExecutions returns execution rows, newest first unless
	// f.Ascending.
	ListExecutions(ctx context.Context, f types.ExecutionFilter) ([]types.Execution, error)
	// Prune deletes executions that finished before cutoff, completed
	// operations last updated before cutoff and stats buckets that start
	// before cutoff; started and unknown operations are never pruned. It
	// returns the rows deleted.
	Prune(ctx context.Context, cutoff time.Time) (int64, error)

	// SaveStats writes (inserts or replaces, by Tool, Start and Replica)
	// monitoring aggregates, so that every replica and a restarted process
	// see the same figures.
	SaveStats(ctx context.Context, buckets []StatsBucket) error
	// LoadStats returns every bucket whose Start is at or after since,
	// of every replica, ordered by Start.
	LoadStats(ctx context.Context, since time.Time) ([]StatsBucket, error)

	// Ping answers nil when the store can serve.
	Ping(ctx context.Context) error
	// Close releases the store; later calls fail with ErrClosed.
	Close() error

	// Admitter takes a write's step and begins its operation in one
	// durable write.
	Admitter
	// Limiter keeps the run's state-writer slot and the quotas.
	Limiter
	// ApprovalStore keeps approvals.
	ApprovalStore
	// RunLister lists runs.
	RunLister
}

// StatsBucket is one process's monitoring aggregate of one tool over one
// time bucket. The store keeps Data as it is given: its encoding belongs to
// package monitor.
type StatsBucket struct {
	Tool    string
	Start   time.Time
	Width   time.Duration
	Replica string
	Data    []byte
}

// Commit is one call's records, written all together or not at all.
type Commit struct {
	// Execution is the call's monitoring row. Required.
	Execution *types.Execution
	// Operation, when set, settles the ledger record of the call's operation.
	Operation *OperationUpdate
	// NewState, when set, replaces the run's state; the commit then fails
	// with ErrVersionConflict unless the run is at ExpectVersion.
	NewState      json.RawMessage
	ExpectVersion int64
	// TakeStep, when set, makes the commit take the run's next step, as
	// AdmitStep would, for a call that took none when it was admitted (a
	// read, a refusal: calls that begin no operation, so that their one
	// write is this commit). The commit fails with ErrStepBudget, writing
	// nothing, when the run's max_steps are all taken. Otherwise the row's
	// Step is the step taken, and its Result is what TakeStep returns for
	// it (the envelope carries its step). TakeStep runs inside the store's
	// transaction: it must be quick, and may run more than once (the last
	// call is the one committed).
	TakeStep func(step int64) json.RawMessage
	// ReleaseWriter, when set, clears the run's state-writer slot in the
	// same transaction, if this holder still holds it (store.Limiter).
	ReleaseWriter string
}

// OperationUpdate is the new status (and result) of a ledger record.
//
// An empty Status deletes the record: the operation provably did not happen
// (never delivered, or refused by the dependency) and may run again. Its
// quota reservations (store.Limiter) are deleted with it.
type OperationUpdate struct {
	Key    string
	Status types.OpStatus
	// Result is the envelope to store with OpCompleted (and OpUnknown, to
	// show what the caller was told).
	Result json.RawMessage
	At     time.Time
}

// Admitter admits a call's step and begins its operation in one durable
// write, saving a write per call (part of Store). Semantics
// are AdmitStep followed by BeginOperation; when the step budget is spent
// (ErrStepBudget) nothing is begun.
type Admitter interface {
	AdmitAndBegin(ctx context.Context, runID string, op *types.Operation) (step int64, existing *types.Operation, began bool, err error)
}
