package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/types"
)

// writerSessions records the PostgreSQL sessions (backend PIDs) on which
// the store's writer sent batches.
type writerSessions struct {
	mu   sync.Mutex
	pids map[uint32]bool
}

func (w *writerSessions) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if conn.Config().RuntimeParams["application_name"] == "toolgate-writer" {
		w.mu.Lock()
		w.pids[conn.PgConn().PID()] = true
		w.mu.Unlock()
	}
	return ctx
}
func (w *writerSessions) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (w *writerSessions) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (w *writerSessions) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (w *writerSessions) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestWriterUsesTwoSessions: 16 callers each making recorded calls at
// once (admission and commit through the writer) are served by at most
// two PostgreSQL sessions of the writer, as docs/scaling.md says for
// sizing max_connections (MaxConns + 3 a replica): more sessions would
// split the same writes into more, smaller transactions, each paying
// PostgreSQL's per-transaction CPU and WAL flush. Every call's writes
// still commit.
func TestWriterUsesTwoSessions(t *testing.T) {
	const callers, calls = 16, 5
	sessions := &writerSessions{pids: map[uint32]bool{}}
	s := openHooked(t, writerHooks{tracer: sessions})
	ctx := t.Context()
	for i := range callers {
		if err := s.CreateRun(ctx, &types.Run{ID: runName(i)}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for n := range calls {
				if err := oneCall(ctx, s, runName(i), int64(i*calls+n)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := len(sessions.pids); got == 0 || got > 2 {
		t.Errorf("the writer used %d PostgreSQL sessions for %d concurrent callers, want 1 or 2", got, callers)
	}
	if st := s.WriterStats(); st.Requests != 2*callers*calls {
		t.Errorf("the writer ran %d writes, want %d (an admission and a commit per call)", st.Requests, 2*callers*calls)
	}
}
