package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// benchData is the Go-function tool's answer, made once so that the
// benchmarks count the pipeline's allocations, not the tool's.
var benchData any = json.RawMessage(`{"ok":1}`)

// benchArgs are distinct arguments made before the timed loop (every write
// must be a new operation), for the same reason.
var benchArgs = func() []json.RawMessage {
	args := make([]json.RawMessage, 1<<16)
	for i := range args {
		args[i] = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
	}
	return args
}()

// benchGateway is a gateway with one Go-function tool of the given effect
// on the in-memory store.
func benchGateway(b *testing.B, effect string) (*toolgate.Gateway, string) {
	b.Helper()
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"noop": {Description: "Does nothing.", Effect: types.Effect(effect),
			InputSchema: map[string]any{"type": "object", "required": []any{"n"},
				"properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) { return benchData, nil }},
	}}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "u"}})
	if err != nil {
		b.Fatal(err)
	}
	return gw, run.ID
}

// BenchmarkCall is the whole in-process pipeline for one call: validation,
// (for writes) the ledger, the attempt, the envelope, the observation, the
// row and the state commit, on the memory store.
func BenchmarkCall(b *testing.B) {
	for _, effect := range []string{"read", "write"} {
		b.Run(effect, func(b *testing.B) {
			gw, run := benchGateway(b, effect)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// Every write is a new operation: distinct args, and a new
				// run each time the args come round again.
				if i > 0 && i%len(benchArgs) == 0 {
					r, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "u"}})
					if err != nil {
						b.Fatal(err)
					}
					run = r.ID
				}
				res, err := gw.Do(ctx, &toolgate.Call{RunID: run, Tool: "noop", Args: benchArgs[i%len(benchArgs)], CallID: "c"})
				if err != nil || !res.OK {
					b.Fatal(err, res)
				}
				i++
			}
		})
	}
}
