package pipeline_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// TestReadTakesStepAtCommit: a read takes its step in the commit of its
// row; the answer, the row's column and the envelope stored in the row all
// carry that step. A read whose run spends its last step on another call
// while the read runs is answered step_budget_exhausted, recorded at step
// 0, and the budget is not overrun.
func TestReadTakesStepAtCommit(t *testing.T) {
	ctx := context.Background()
	var gw *toolgate.Gateway
	var runID string
	stealStep := false
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"peek": {Description: "Reads.", Effect: types.EffectRead,
			InputSchema: map[string]any{"type": "object"},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				if stealStep {
					// Another call of the run is admitted meanwhile.
					if _, err := gw.Store().AdmitStep(ctx, runID); err != nil {
						return nil, err
					}
				}
				return map[string]any{"seen": true}, nil
			}},
	}}
	var err error
	gw, err = toolgate.Open(ctx, toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "u"}, MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	runID = run.ID

	for want := int64(1); want <= 2; want++ {
		res, err := gw.Call(ctx, runID, "peek", map[string]any{})
		if err != nil || !res.OK || res.Meta.Step != want {
			t.Fatalf("read %d: %v, %+v; want ok at step %d", want, err, res, want)
		}
	}
	stealStep = true // step 3 goes to the other call
	res, err := gw.Call(ctx, runID, "peek", map[string]any{})
	if err != nil || res.Code() != types.CodeStepBudgetExhausted || res.Meta.Step != 0 {
		t.Fatalf("read losing the last step: %v, %+v; want step_budget_exhausted at step 0", err, res)
	}

	rows, err := gw.History(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, wantStep := range []int64{1, 2, 0} {
		var stored types.Result
		if err := json.Unmarshal(rows[i].Result, &stored); err != nil {
			t.Fatal(err)
		}
		if rows[i].Step != wantStep || stored.Meta.Step != wantStep {
			t.Errorf("row %d: step column %d, stored envelope's step %d; want %d", i, rows[i].Step, stored.Meta.Step, wantStep)
		}
	}
	if r, err := gw.GetRun(ctx, runID); err != nil || r.Step != 3 {
		t.Fatalf("run step %v, %v; want 3 (the budget)", r, err)
	}
}
