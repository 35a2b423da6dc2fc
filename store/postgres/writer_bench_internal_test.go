package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// roundTrips counts what the store's connections send, each a round trip:
// a statement, a pipelined batch, a statement's preparation. The liveness
// connection's pings are left out.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) count(conn *pgx.Conn) {
	if conn.Config().RuntimeParams["application_name"] != "toolgate-liveness" {
		c.n.Add(1)
	}
}

func (c *roundTrips) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.count(conn)
	return ctx
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.count(conn)
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *roundTrips) TracePrepareStart(ctx context.Context, conn *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.count(conn)
	return ctx
}
func (c *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// BenchmarkCallSequence makes, for 1, 8 and 64 callers each on its own
// run, the store calls of one recorded write call through the pipeline
// (GetRun, AdmitAndBegin, Commit of row, operation and run) and reports
// calls/s, round trips and transactions per call, calls per transaction,
// and the CPU time per call of this process (getrusage) and of the
// PostgreSQL server (/proc of the postmaster and its children; the server
// must run on this machine).
//
// writers=N is the writer with N goroutines and connections (the store
// has writerConns); pool is the same statements without the writer, each
// write a transaction of its own on a pool connection (as before the
// writer), for an A/B in one run.
func BenchmarkCallSequence(b *testing.B) {
	for _, mode := range []struct {
		name  string
		conns int
		call  func(ctx context.Context, s *Store, runID string, n int64) error
	}{
		{"pool", 1, oneCallPool},
		{"writers=1", 1, oneCall},
		{"writers=2", 2, oneCall},
		{"writers=4", 4, oneCall},
		{"writers=8", 8, oneCall},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for _, callers := range []int{1, 8, 64} {
				b.Run(strconv.Itoa(callers), func(b *testing.B) {
					rt := &roundTrips{}
					s := openBench(b, writerHooks{tracer: rt, conns: mode.conns})
					measureSequence(b, s, rt, callers, mode.call)
				})
			}
		})
	}
}

// openBench is openHooked for a benchmark, with the hooks h.
func openBench(b *testing.B, h writerHooks) *Store {
	url := os.Getenv("TOOLGATE_TEST_POSTGRES")
	if url == "" {
		b.Skip("TOOLGATE_TEST_POSTGRES is not set (run under scripts/with-postgres.sh)")
	}
	schema := fmt.Sprintf("toolgate_bench_%d", time.Now().UnixNano())
	s, err := Open(b.Context(), url, Options{Owner: "bench", Schema: schema, hooks: h})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = s.Close()
		if conn, err := pgx.Connect(context.Background(), url); err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(context.Background())
		}
	})
	return s
}

func measureSequence(b *testing.B, s *Store, rt *roundTrips, callers int,
	call func(ctx context.Context, s *Store, runID string, n int64) error) {
	ctx := context.Background()
	for i := range callers {
		if err := s.CreateRun(ctx, &types.Run{ID: runName(i)}); err != nil {
			b.Fatal(err)
		}
	}
	server, err := serverPID(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				if err := call(ctx, s, runName(i), n); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	rt0, w0, self0, pg0 := rt.n.Load(), s.WriterStats(), selfCPU(), serverCPU(server)
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	rt1, w1, self1, pg1 := rt.n.Load(), s.WriterStats(), selfCPU(), serverCPU(server)
	n := float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(rt1-rt0)/n, "rt/call")
	if w1.Batches > w0.Batches {
		b.ReportMetric(float64(w1.Batches-w0.Batches)/n, "txn/call")
		b.ReportMetric(float64(w1.Requests-w0.Requests)/float64(w1.Batches-w0.Batches), "writes/txn")
	}
	b.ReportMetric(float64(self1-self0)/n/float64(time.Microsecond), "client-µs/call")
	if pg0 >= 0 && pg1 >= 0 {
		b.ReportMetric(float64(pg1-pg0)/n/float64(time.Microsecond), "server-µs/call")
	}
}

// oneCall is the store's part of one recorded write call.
func oneCall(ctx context.Context, s *Store, runID string, n int64) error {
	op, c, err := callRecords(ctx, s, runID, n)
	if err != nil {
		return err
	}
	step, _, began, err := s.AdmitAndBegin(ctx, runID, op)
	if err != nil || !began {
		return fmt.Errorf("admit and begin: %v, began %v", err, began)
	}
	c.Execution.Step = step
	return s.Commit(ctx, c)
}

// oneCallPool is oneCall with each write in a transaction of its own on a
// pool connection, as the store wrote before the writer.
func oneCallPool(ctx context.Context, s *Store, runID string, n int64) error {
	op, c, err := callRecords(ctx, s, runID, n)
	if err != nil {
		return err
	}
	args := append(s.beginArgs(op), nanos(time.Now()), runID)
	err = s.write(ctx, "admit", func(ctx context.Context, conn *pgxpool.Conn) error {
		var step *int64
		var exists, inserted bool
		if err := conn.QueryRow(ctx, admitAndBeginSQL, args...).Scan(&step, &exists, &inserted); err != nil {
			return err
		}
		if step == nil || !inserted {
			return fmt.Errorf("not admitted: step %v, inserted %v", step, inserted)
		}
		c.Execution.Step = *step
		return nil
	})
	if err != nil {
		return err
	}
	query, qargs := commitStatement(c, nanos(time.Now()))
	return s.write(ctx, "commit", func(ctx context.Context, conn *pgxpool.Conn) error {
		var id, version int64
		return conn.QueryRow(ctx, query, qargs...).Scan(&id, &version)
	})
}

// callRecords reads the run, as the pipeline does for every call, and
// returns the operation and commit of call n.
func callRecords(ctx context.Context, s *Store, runID string, n int64) (*types.Operation, *store.Commit, error) {
	run, err := s.GetRun(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	key := fmt.Sprintf("op-%d", n)
	op := &types.Operation{Key: key, ArgsHash: "h", Args: []byte(fmt.Sprintf(`{"n":%d}`, n)), RunID: run.ID, Tool: "record",
		LeaseUntil: time.Now().Add(time.Minute)}
	e := &types.Execution{RunID: runID, CallID: "c", Tool: "record", OperationKey: key, Code: "ok", OK: true,
		Result: []byte(`{"recorded":true}`), StartedAt: time.Now(), FinishedAt: time.Now()}
	return op, &store.Commit{Execution: e,
		Operation: &store.OperationUpdate{Key: key, Status: types.OpCompleted, Result: []byte(`{"ok":true}`)}}, nil
}

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverPID is the postmaster's pid: the parent of a backend's.
func serverPID(ctx context.Context, s *Store) (int, error) {
	var backend int
	if err := s.pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, err
	}
	f, err := procStat(backend)
	if err != nil {
		return -1, nil // another machine's: no server CPU
	}
	return int(f.ppid), nil
}

// serverCPU is the user and system time of the postmaster, its children
// alive and those it reaped (-1 when unreadable). Linux counts it in
// clock ticks of 10ms (USER_HZ 100).
func serverCPU(postmaster int) time.Duration {
	if postmaster <= 0 {
		return -1
	}
	pm, err := procStat(postmaster)
	if err != nil {
		return -1
	}
	ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if f, err := procStat(pid); err == nil && int(f.ppid) == postmaster {
			ticks += f.utime + f.stime
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

type statFields struct{ ppid, utime, stime, cutime, cstime int64 }

// procStat reads the fields of /proc/pid/stat this file needs.
func procStat(pid int) (statFields, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return statFields{}, err
	}
	// The command may hold spaces: the fields start after its ')'.
	rest := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(rest) < 15 {
		return statFields{}, fmt.Errorf("short stat of %d", pid)
	}
	num := func(i int) int64 { v, _ := strconv.ParseInt(rest[i], 10, 64); return v }
	// rest[0] is field 3 (state): ppid 4, utime 14, stime 15, cutime 16, cstime 17.
	return statFields{ppid: num(1), utime: num(11), stime: num(12), cutime: num(13), cstime: num(14)}, nil
}
