package sqlite_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReadCommit measures the write every read call makes: its
// execution row, with the step taken in the same transaction
// (store.Commit.TakeStep), no operation and no state. It reports the
// process's CPU time per commit beside the wall time, and how many
// commits the writer packed into one transaction.
func BenchmarkReadCommit(b *testing.B) {
	for _, committers := range []int{1, 32} {
		b.Run(fmt.Sprintf("committers=%d", committers), func(b *testing.B) {
			s := openTemp(b)
			ctx := b.Context()
			for i := range committers {
				run := &types.Run{ID: fmt.Sprintf("read-%d", i), Principal: types.Principal{ID: "p"}, State: json.RawMessage(`{}`)}
				if err := s.CreateRun(ctx, run); err != nil {
					b.Fatal(err)
				}
			}
			result := json.RawMessage(`{"ok":true,"data":{"id":"ORD-4471","status":"delivered"},"error":null,"observation":"Order ORD-4471.","meta":{"step":0}}`)
			before := s.Stats()
			var next atomic.Int64
			var failed atomic.Pointer[error]
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range committers {
				runID := fmt.Sprintf("read-%d", i)
				wg.Go(func() {
					<-start
					for next.Add(1) <= int64(b.N) {
						now := time.Now()
						c := &store.Commit{
							Execution: &types.Execution{RunID: runID, CallID: "call_1", Tool: "get_order", Dependency: "orders",
								ArgsHash: "sha256:args", Args: json.RawMessage(`{"order_id":"ORD-4471"}`), Code: types.CodeOK, OK: true,
								SideEffect: types.SideEffectNone, Attempts: 1, StartedAt: now, FinishedAt: now, Result: result},
							TakeStep: func(int64) json.RawMessage { return result },
						}
						if err := s.Commit(ctx, c); err != nil {
							failed.CompareAndSwap(nil, &err)
							return
						}
					}
				})
			}
			cpu0 := cpuTime(b)
			b.ResetTimer()
			close(start)
			wg.Wait()
			b.StopTimer()
			cpu := cpuTime(b) - cpu0
			if err := failed.Load(); err != nil {
				b.Fatalf("Commit: %v", *err)
			}
			st := s.Stats()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			if n := st.Batches - before.Batches; n > 0 {
				b.ReportMetric(float64(st.Requests-before.Requests)/float64(n), "commits/txn")
			}
		})
	}
}
