package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/feedback"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/normalise"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Read is a read of an upstream that is not a tool call: an imported MCP
// server's resources/read, prompts/get or completion/complete.
type Read struct {
	// RunID is the run the read is recorded in; CallID its call id (a
	// fresh one when empty).
	RunID, CallID string
	// Name is what the execution row's tool says ("resources/read").
	Name string
	// Dependency is the server: its breaker guards the read.
	Dependency string
	// Args are the request's parameters, recorded in the row.
	Args json.RawMessage
	// Timeout bounds Do. Required.
	Timeout time.Duration
	// Do makes the request; its data is what the row records.
	Do func(ctx context.Context) (json.RawMessage, *execute.Failure)
}

// Read runs r once (a read is not retried: the client asks again) under
// the dependency's circuit breaker and r.Timeout, and records one
// execution row, as a read tool call is recorded: it takes a step of the
// run, begins no operation and changes no state. The error is non-nil only
// when there is no such run (ErrUnknownRun) or the store cannot be read.
func (p *Pipeline) Read(ctx context.Context, r *Read) (*types.Result, error) {
	run, err := p.store.GetRun(ctx, r.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRun, r.RunID)
	}
	if err != nil {
		return nil, err
	}
	call := &types.Call{RunID: r.RunID, Tool: r.Name, Args: r.Args, CallID: r.CallID}
	if call.CallID == "" {
		call.CallID = NewCallID()
	}
	started := p.clock.Now()
	ctx = context.WithoutCancel(ctx) // recorded even when the client goes
	if run.OutOfSteps() {
		res := exhausted(run.MaxSteps)
		return res, p.recordRead(ctx, r, call, res, started, false)
	}
	res, delivered := p.readOnce(ctx, r)
	normalise.Settle(res, types.EffectRead, delivered)
	err = p.recordRead(ctx, r, call, res, started, true)
	if errors.Is(err, store.ErrStepBudget) {
		res = exhausted(run.MaxSteps)
		err = p.recordRead(ctx, r, call, res, started, false)
	}
	return res, err
}

// readOnce is the read under the breaker: its envelope (no meta yet), and
// whether the request reached the server.
func (p *Pipeline) readOnce(ctx context.Context, r *Read) (*types.Result, bool) {
	var bset breaker.Settings
	if dep := p.Tools().Dependencies[r.Dependency]; dep != nil {
		bset = breakerSettings(dep.Breaker)
	}
	br := p.breakers.Get(r.Dependency, bset)
	ticket, err := br.Allow()
	if err != nil {
		var open *breaker.OpenError
		if errors.As(err, &open) {
			return types.Fail(types.CodeCircuitOpen, fmt.Sprintf("%s has failed %d times in a row and is temporarily unavailable; toolgate sent nothing", open.Dependency, open.Failures), types.Meta{}), false
		}
		return types.Fail(types.CodeCircuitOpen, err.Error(), types.Meta{}), false
	}
	health := breaker.Failure // unless Do returns
	defer func() { br.Done(ticket, health) }()
	rctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	data, fail := r.Do(rctx)
	if fail != nil {
		health = breakerOutcome(fail)
		return types.Fail(fail.Code, fail.Message, types.Meta{}), fail.Delivered
	}
	health = breaker.Success
	return types.OK(data, types.Meta{}), true
}

// recordRead completes res (meta, observation) and commits its row,
// taking the run's next step when step is set.
func (p *Pipeline) recordRead(ctx context.Context, r *Read, call *types.Call, res *types.Result, started time.Time, step bool) error {
	finished := p.clock.Now()
	m := &res.Meta
	m.RunID, m.Tool, m.CallID, m.Dependency, m.Attempts = r.RunID, r.Name, call.CallID, r.Dependency, 1
	m.ElapsedMS = finished.Sub(started).Milliseconds()
	feedback.Annotate(res, &feedback.Facts{Effect: types.EffectRead, Dependency: r.Dependency, ReadTimeout: r.Timeout})
	row, stepAt, err := monitor.Row(&monitor.Facts{Call: call, Result: res, Dependency: r.Dependency,
		Started: started, Finished: finished})
	if err != nil {
		return err
	}
	c := &store.Commit{Execution: row}
	if step {
		encoded := row.Result
		c.TakeStep = func(n int64) json.RawMessage { return monitor.WithStep(encoded, stepAt, n) }
	}
	if err := p.store.Commit(ctx, c); err != nil {
		return err
	}
	if step {
		res.Meta.Step = row.Step
	}
	for _, s := range p.sinks {
		s.Record(row)
	}
	return nil
}
