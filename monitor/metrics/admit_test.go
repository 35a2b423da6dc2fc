package metrics

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// A write through a gateway on the instrumented store (as toolgate serve
// runs it) takes its step and begins its operation in one durable write:
// the wrapper times that one write, and makes it no two.
func TestInstrumentedStoreKeepsOneWriteAdmission(t *testing.T) {
	m := New(Config{NoRuntime: true})
	st := InstrumentStore(memory.New(), m)
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"pay": {Description: "Pays.", Effect: types.EffectWrite,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			Idempotency: config.Idempotency{Key: "pay:{n}:{run_id}"},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return map[string]any{"paid": true}, nil
			}},
	}}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := gw.Call(context.Background(), run.ID, "pay", map[string]any{"n": 1}); err != nil || !res.OK {
		t.Fatalf("pay: %+v, %v", res, err)
	}
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, f := range families {
		if f.GetName() == "toolgate_store_commit_duration_seconds" {
			for _, metric := range f.GetMetric() {
				counts[metric.GetLabel()[0].GetValue()] = metric.GetHistogram().GetSampleCount()
			}
		}
	}
	if counts["admit_and_begin"] != 1 || counts["begin_operation"] != 0 || counts["admit_step"] != 0 {
		t.Fatalf("timed writes %v, want the write admitted and begun in one (admit_and_begin 1, admit_step and begin_operation 0)", counts)
	}
}
