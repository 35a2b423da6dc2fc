package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

// recordedCallers are the numbers of concurrent callers
// BenchmarkRecordedCalls measures.
var recordedCallers = []int{1, 8, 64}

// benchStores open a fresh store of each backend for one benchmark and
// close it when the benchmark ends. PostgreSQL is skipped without
// TOOLGATE_TEST_POSTGRES (see postgrestest).
var benchStores = []struct {
	name string
	open func(b *testing.B) store.Store
}{
	{"memory", func(b *testing.B) store.Store { return memory.New() }},
	{"sqlite", func(b *testing.B) store.Store {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "toolgate.db"), sqlite.Options{Owner: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
				b.Error(err)
			}
		})
		return s
	}},
	{"postgres", func(b *testing.B) store.Store { return postgrestest.Open(b, postgres.Options{Owner: "bench"}) }},
}

// BenchmarkRecordedCalls is the whole pipeline, store included, for a
// write tool (a Go function that answers at once): admission, the ledger's
// write-ahead record, the attempt, the envelope and observation, and the
// one commit of execution row, operation status and run state. 1, 8 and 64
// callers share b.N calls, each caller on its own run with distinct
// arguments, so every call is a new operation. It reports calls/s: the
// rate at which calls are recorded durably (memory: not durable, the
// pipeline's own ceiling).
func BenchmarkRecordedCalls(b *testing.B) {
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			for _, callers := range recordedCallers {
				b.Run(strconv.Itoa(callers), func(b *testing.B) {
					measureRecordedCalls(b, st.open(b), callers)
				})
			}
		})
	}
}

// measureRecordedCalls shares b.N calls among callers goroutines on a
// gateway over s and reports calls/s.
func measureRecordedCalls(b *testing.B, s store.Store, callers int) {
	ctx := context.Background()
	cfg := &config.Config{Tools: map[string]*config.Tool{
		"record": {Description: "Records one thing.", Effect: types.EffectWrite,
			InputSchema: map[string]any{"type": "object", "required": []any{"n"},
				"properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return json.RawMessage(`{"recorded":true}`), nil
			}},
	}}
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Store: s, Owner: "bench", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	runs := make([]string, callers)
	for i := range runs {
		run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "u"}})
		if err != nil {
			b.Fatal(err)
		}
		runs[i] = run.ID
	}

	var next atomic.Int64
	var failed atomic.Pointer[error]
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, runID := range runs {
		wg.Go(func() {
			<-start
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				args := json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))
				res, err := gw.Do(ctx, &toolgate.Call{RunID: runID, Tool: "record", Args: args, CallID: "c"})
				if err == nil && !res.OK {
					err = fmt.Errorf("call %d: %s: %s", n, res.Error.Code, res.Error.Message)
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
