package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// RunOptions start a run.
type RunOptions struct {
	// ID of the run; a random one (NewRunID) when empty. With an Owner,
	// the run is stored as that key's run ID (types.ScopedRunID).
	ID string
	// Principal the run acts for.
	Principal types.Principal
	// State is the initial state document (a JSON object); empty means {}.
	State json.RawMessage
	// MaxSteps bounds the calls of the run; 0 means no bound.
	MaxSteps int64
	// Owner is the API key name that owns the run ("" for the library).
	Owner string
}

// StartRun creates a run, stamped with the pipeline's clock, under the id
// its owner's key sees it by (types.ScopedRunID).
func (p *Pipeline) StartRun(ctx context.Context, o RunOptions) (*types.Run, error) {
	id := o.ID
	if id == "" {
		id = NewRunID()
	}
	id = types.ScopedRunID(o.Owner, id)
	st, err := state.Canonicalize(o.State)
	if err != nil {
		return nil, fmt.Errorf("toolgate: initial %w", err)
	}
	if o.MaxSteps < 0 {
		return nil, errors.New("toolgate: max_steps must not be negative")
	}
	now := p.Now()
	run := &types.Run{ID: id, Principal: o.Principal, State: st, InitialState: st, MaxSteps: o.MaxSteps,
		Owner: o.Owner, CreatedAt: now, UpdatedAt: now}
	if err := p.store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	return run, nil
}

// GetRun returns a run, or an error wrapping ErrUnknownRun.
func (p *Pipeline) GetRun(ctx context.Context, id string) (*types.Run, error) {
	r, err := p.store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRun, id)
	}
	return r, err
}

// History returns all of a run's execution rows in commit order.
func (p *Pipeline) History(ctx context.Context, runID string) ([]types.Execution, error) {
	// A limit of 0 or less means the store's default page (100), not all.
	return p.store.ListExecutions(ctx, types.ExecutionFilter{RunID: runID, Ascending: true, Limit: math.MaxInt})
}

// Replayed is the outcome of rebuilding a run's state from its log.
type Replayed struct {
	// State is the state rebuilt from the execution log alone.
	State json.RawMessage `json:"state"`
	// Matches says whether it equals the stored state.
	Matches bool `json:"matches"`
	// Steps is how many execution rows were folded.
	Steps int `json:"steps"`
}

// Replay rebuilds a run's state from its initial state and the state
// patches recorded in its execution rows, and compares it with the stored
// state.
func (p *Pipeline) Replay(ctx context.Context, runID string) (*Replayed, error) {
	run, err := p.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	rows, err := p.History(ctx, runID)
	if err != nil {
		return nil, err
	}
	st, err := state.Replay(run.InitialState, rows)
	if err != nil {
		return nil, err
	}
	return &Replayed{State: st, Matches: state.Equal(st, run.State), Steps: len(rows)}, nil
}

// Decide approves or denies a pending approval, recording who decided
// (by, and the name of the API key that did, see store.Decider).
func (p *Pipeline) Decide(ctx context.Context, id string, approve bool, by, byKey, comment string) (*store.Approval, error) {
	status := store.ApprovalDenied
	if approve {
		status = store.ApprovalApproved
	}
	return p.store.DecideApproval(ctx, id, status, store.Decider(by, byKey), comment, p.Now())
}
