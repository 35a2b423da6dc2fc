package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Committers are the numbers of concurrent committers CommitBenchmark
// measures.
var Committers = []int{1, 8, 64}

// CommitBenchmark measures Commit, the write of every call, with 1, 8 and
// 64 goroutines committing at once, each on a fresh store from open (closed
// when b ends). See MeasureCommits.
func CommitBenchmark(b *testing.B, open func(b *testing.B) store.Store) {
	for _, committers := range Committers {
		b.Run(fmt.Sprintf("committers=%d", committers), func(b *testing.B) {
			MeasureCommits(b, open(b), committers)
		})
	}
}

// SetupWrites is the number of writes MeasureCommits makes, one at a time,
// before its timer starts, per committer: a run and an operation.
const SetupWrites = 2

// MeasureCommits shares b.N commits among exactly committers goroutines
// (whatever GOMAXPROCS is) and reports commits/s. Each goroutine has its
// own run and commits an execution row, the settlement of an operation and
// a new state at the version it holds, as the pipeline does. Before the
// timer starts it makes SetupWrites writes per committer, one at a time.
func MeasureCommits(b *testing.B, s store.Store, committers int) {
	ctx := b.Context()
	seedCommitters(b, s, committers)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range committers {
		runID, key := fmt.Sprintf("bench-%d", i), fmt.Sprintf("bench-op-%d", i)
		wg.Go(func() {
			// One Commit value per goroutine, reused: the store copies what
			// it keeps, so the benchmark measures the store, not the caller.
			c := committerCommit(runID, key, time.Now())
			exec := c.Execution
			<-start
			for next.Add(1) <= int64(b.N) {
				exec.Step = c.ExpectVersion + 1
				if err := s.Commit(ctx, c); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				c.ExpectVersion++
			}
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatalf("Commit: %v", *err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// seedCommitters makes each committer's run (no step budget) and begins
// its operation, bench-%d and bench-op-%d.
func seedCommitters(b *testing.B, s store.Store, committers int) {
	ctx := b.Context()
	for i := range committers {
		run := newRun(fmt.Sprintf("bench-%d", i))
		run.MaxSteps = 0
		if err := s.CreateRun(ctx, run); err != nil {
			b.Fatal(err)
		}
		op := newOperation(fmt.Sprintf("bench-op-%d", i))
		op.RunID = run.ID
		if _, _, err := s.BeginOperation(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// committerCommit is the commit a committer repeats: a refund's execution
// row, the operation key's settlement and a new state, as the pipeline
// commits them.
func committerCommit(runID, key string, now time.Time) *store.Commit {
	args := json.RawMessage(`{"order_id":"o-1","amount_paise":` + exactLimit + `}`)
	result := json.RawMessage(`{"ok":true,"data":{"refund_id":"r-1"},"error":null,"observation":"Refunded 500000 paise."}`)
	state := json.RawMessage(`{"balance":` + exactLimit + `,"refunds":["r-1"]}`)
	return &store.Commit{
		Execution: &types.Execution{
			RunID: runID, CallID: "toolu_01", Tool: "refund", ArgsHash: "sha256:args", Args: args,
			OperationKey: key, Code: types.CodeOK, OK: true, SideEffect: types.SideEffectCommitted,
			Attempts: 1, StartedAt: now, FinishedAt: now, Result: result,
		},
		Operation: &store.OperationUpdate{Key: key, Status: types.OpCompleted, Result: result, At: now},
		NewState:  state,
	}
}
