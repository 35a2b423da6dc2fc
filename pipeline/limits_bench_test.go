package pipeline_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// limitBenchGateway is benchGateway's write tool under one kind of limit.
func limitBenchGateway(b *testing.B, limit string) (*toolgate.Gateway, string) {
	b.Helper()
	t := &config.Tool{Description: "Does nothing.", Effect: types.EffectWrite,
		InputSchema: map[string]any{"type": "object", "required": []any{"n"},
			"properties": map[string]any{"n": map[string]any{"type": "integer"}}},
		Func: func(ctx context.Context, args json.RawMessage) (any, error) { return benchData, nil }}
	switch limit {
	case "state-rule": // judged against the state: the exclusive slot
		t.Rules = []config.Rule{{Deny: "(has(state.total) ? state.total : 0) < 0", Code: "over_limit", Message: "no"}}
		t.State = map[string]string{"total": "(has(state.total) ? state.total : 0) + 1"}
	case "state-update": // changes the state only: the shared slot
		t.State = map[string]string{"last": "args.n"}
	case "quota":
		t.Quotas = []config.Quota{{Name: "q", Limit: 1 << 40, Window: config.Duration(time.Hour)}}
	}
	cfg := &config.Config{Tools: map[string]*config.Tool{"noop": t}}
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

// BenchmarkCallLimited is BenchmarkCall's write under each limit, one call
// at a time, then with every goroutine calling on one run (parallel: the
// state-rule writes of a run are serialised, the others are not).
func BenchmarkCallLimited(b *testing.B) {
	for _, limit := range []string{"none", "state-update", "state-rule", "quota"} {
		b.Run(limit, func(b *testing.B) {
			gw, run := limitBenchGateway(b, limit)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				res, err := gw.Do(ctx, &toolgate.Call{RunID: run, Tool: "noop", Args: benchArgs[i%len(benchArgs)], CallID: "c"})
				if err != nil || !res.OK {
					b.Fatal(err, res)
				}
				if i++; i%len(benchArgs) == 0 {
					r, _ := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "u"}})
					run = r.ID
				}
			}
		})
		b.Run(limit+"/parallel-one-run", func(b *testing.B) {
			gw, run := limitBenchGateway(b, limit)
			ctx := context.Background()
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					res, err := gw.Do(ctx, &toolgate.Call{RunID: run, Tool: "noop", Args: benchArgs[int(i)%len(benchArgs)], CallID: "c"})
					if err != nil || (!res.OK && res.Code() != types.CodeIdempotencyConflict) {
						b.Fatal(err, res.Observation)
					}
				}
			})
		})
	}
}
