// Package monitor is stage 6 of the pipeline: one execution row per call
// (success or failure, refusals and replays included), and the figures
// derived from those rows.
package monitor

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/types"
)

// Facts are what a row records beside the result.
type Facts struct {
	Call       *types.Call
	Result     *types.Result
	Dependency string
	ArgsHash   string
	Retries    int
	Started    time.Time
	Finished   time.Time
	StatePatch json.RawMessage
	TraceID    string
	// ArgsValid says Call.Args are known to be valid JSON (validation
	// decoded them), saving the check.
	ArgsValid bool
}

// Row builds the execution row of a call. The whole envelope is kept in the
// row, so that the run's history shows exactly what the model was told.
// stepAt is where, in the row's Result, the digits of meta.step are, for a
// row whose step the store numbers when it commits it
// (store.Commit.TakeStep): see WithStep.
func Row(f *Facts) (row *types.Execution, stepAt int, err error) {
	res := f.Result
	envelope, stepAt, err := res.AppendJSONStepAt(make([]byte, 0, 384+len(res.Data)+len(res.Observation)), true)
	if err != nil {
		return nil, 0, err
	}
	args := f.Call.Args
	if !f.ArgsValid && !json.Valid(args) {
		args, _ = json.Marshal(string(args))
	}
	return &types.Execution{
		RunID:        res.Meta.RunID,
		Step:         res.Meta.Step,
		CallID:       res.Meta.CallID,
		Tool:         res.Meta.Tool,
		Dependency:   f.Dependency,
		ArgsHash:     f.ArgsHash,
		Args:         args,
		OperationKey: res.Meta.IdempotencyKey,
		Code:         res.Code(),
		OK:           res.OK,
		SideEffect:   res.Meta.SideEffect,
		Replayed:     res.Meta.Replayed,
		Verified:     res.Meta.Verified,
		Attempts:     res.Meta.Attempts,
		Retries:      f.Retries,
		LatencyMS:    float64(f.Finished.Sub(f.Started).Microseconds()) / 1000,
		InputTokens:  f.Call.Usage.InputTokens,
		OutputTokens: f.Call.Usage.OutputTokens,
		StartedAt:    f.Started,
		FinishedAt:   f.Finished,
		StatePatch:   f.StatePatch,
		Result:       envelope,
		TraceID:      f.TraceID,
	}, stepAt, nil
}

// WithStep returns a copy of a row's result encoded at step 0 (by Row,
// whose stepAt it takes) with the step set to step instead.
func WithStep(result json.RawMessage, stepAt int, step int64) json.RawMessage {
	out := make([]byte, 0, len(result)+19)
	out = append(out, result[:stepAt]...)
	out = strconv.AppendInt(out, step, 10)
	return append(out, result[stepAt+1:]...)
}
