package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// The tests of this file hold the writer still with a gate: a request that
// blocks inside the writer until released. Requests queued meanwhile are
// all taken together by the next batch, so what the tests assert about
// batching does not depend on timing.

// harness is a store opened with hooks that report each queued request.
type harness struct {
	*Store
	path   string
	queued chan struct{}
	// failCommits makes every COMMIT fail while set.
	failCommits atomic.Bool
}

// errDiskGone is the COMMIT failure the harness injects.
var errDiskGone = errors.New("injected: disk gone")

// setup opens a fresh store whose writer reports every queued request on
// h.queued (buffered: nobody has to listen).
func setup(t *testing.T) *harness {
	t.Helper()
	h := &harness{path: filepath.Join(t.TempDir(), "toolgate.db"), queued: make(chan struct{}, 1024)}
	s, err := open(t.Context(), h.path, Options{Owner: "test"}, hooks{
		enqueued: func() { h.queued <- struct{}{} },
		beforeCommit: func() error {
			if h.failCommits.Load() {
				return errDiskGone
			}
			return nil
		},
	})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	h.Store = s
	t.Cleanup(func() { _ = s.Close() })
	return h
}

// drainQueued forgets the queued signals of the requests that have
// returned: do sends its signal before waiting for the outcome.
func (h *harness) drainQueued() {
	for {
		select {
		case <-h.queued:
		default:
			return
		}
	}
}

// waitQueued waits until n more requests are queued.
func (h *harness) waitQueued(n int) {
	for range n {
		<-h.queued
	}
}

// gate blocks the writer inside a request until the returned release is
// called; release returns the gate request's own outcome. work, when set,
// runs inside the gate request first.
func (h *harness) gate(t *testing.T, ctx context.Context, work func(ctx context.Context, tx *writeTx) error) (release func() error) {
	t.Helper()
	h.drainQueued() // the signals of the requests that already returned
	entered, open := make(chan struct{}), make(chan struct{})
	outcome := make(chan error, 1)
	go func() {
		outcome <- h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
			close(entered)
			<-open
			if work != nil {
				return work(ctx, tx)
			}
			return nil
		})
	}()
	<-entered
	h.waitQueued(1) // the gate's own signal
	return func() error {
		close(open)
		return <-outcome
	}
}

// newRun returns a run with an empty state.
func newRun(id string) *types.Run {
	return &types.Run{ID: id, State: json.RawMessage(`{}`)}
}

// newCommit returns a Commit of one successful search on runID.
func newCommit(runID string, state string, expect int64) *store.Commit {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &store.Commit{
		Execution: &types.Execution{RunID: runID, Tool: "search", Code: types.CodeOK, OK: true,
			SideEffect: types.SideEffectNone, StartedAt: now, FinishedAt: now, Result: json.RawMessage(`{"ok":true}`)},
		ExpectVersion: expect,
	}
	if state != "" {
		c.NewState = json.RawMessage(state)
	}
	return c
}

func TestGroupCommitPacksConcurrentCommits(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	const committers = 64
	for i := range committers {
		if err := h.CreateRun(ctx, newRun(fmt.Sprintf("run-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	release := h.gate(t, ctx, nil)
	before := h.Stats()

	start := make(chan struct{})
	errs := make([]error, committers)
	var wg sync.WaitGroup
	for i := range committers {
		wg.Go(func() {
			<-start
			errs[i] = h.Commit(ctx, newCommit(fmt.Sprintf("run-%d", i), `{"n":1}`, 0))
		})
	}
	close(start)
	h.waitQueued(committers) // every committer waits in the queue
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	after := h.Stats()
	batches, requests := after.Batches-before.Batches, after.Requests-before.Requests
	t.Logf("%d concurrent commits ran in %d transaction(s)", requests, batches)
	if requests != committers || batches != 1 {
		t.Errorf("%d commits in %d transactions, want %d in 1", requests, batches, committers)
	}
	if after.Batches >= after.Requests {
		t.Errorf("stats %+v: want fewer batches than requests", after)
	}
	for i := range committers {
		if run, err := h.GetRun(ctx, fmt.Sprintf("run-%d", i)); err != nil || run.Version != 1 {
			t.Fatalf("run-%d after the batch: %+v, %v", i, run, err)
		}
	}
}

func TestGroupCommitMaxBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolgate.db")
	queued := make(chan struct{}, 64)
	s, err := open(t.Context(), path, Options{MaxBatch: 4}, hooks{enqueued: func() { queued <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h := &harness{Store: s, path: path, queued: queued}
	release := h.gate(t, t.Context(), nil)
	before := h.Stats()

	var wg sync.WaitGroup
	errs := make([]error, 4) // as many as the queue holds (MaxBatch)
	for i := range errs {
		wg.Go(func() { errs[i] = h.CreateRun(t.Context(), newRun(fmt.Sprintf("run-%d", i))) })
	}
	h.waitQueued(len(errs))
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if d := h.Stats().Batches - before.Batches; d != 1 {
		t.Errorf("4 queued requests with MaxBatch 4 ran in %d transactions, want 1", d)
	}
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	if err := h.CreateRun(ctx, newRun("run-1")); err != nil {
		t.Fatal(err)
	}
	release := h.gate(t, ctx, nil)
	before := h.Stats()

	// Queued in this order, all in the same batch: a good commit, a commit
	// at the version the first one consumes, a duplicate run, a new run.
	first, stale := newCommit("run-1", `{"n":1}`, 0), newCommit("run-1", `{"n":2}`, 0)
	calls := []func() error{
		func() error { return h.Commit(ctx, first) },
		func() error { return h.Commit(ctx, stale) },
		func() error { return h.CreateRun(ctx, newRun("run-1")) },
		func() error { return h.CreateRun(ctx, newRun("run-2")) },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		h.waitQueued(1)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	if d := h.Stats().Batches - before.Batches; d != 1 {
		t.Fatalf("the four requests ran in %d transactions, want 1", d)
	}
	if errs[0] != nil || !errors.Is(errs[1], store.ErrVersionConflict) || !errors.Is(errs[2], store.ErrRunExists) || errs[3] != nil {
		t.Fatalf("outcomes = %v; want nil, ErrVersionConflict, ErrRunExists, nil", errs)
	}
	run, err := h.GetRun(ctx, "run-1")
	if err != nil || run.Version != 1 || string(run.State) != `{"n":1}` {
		t.Fatalf("run-1 = %+v, %v; want version 1 with the first commit's state", run, err)
	}
	rows, err := h.ListExecutions(ctx, types.ExecutionFilter{RunID: "run-1"})
	if err != nil || len(rows) != 1 || rows[0].ID != first.Execution.ID {
		t.Fatalf("run-1 rows = %+v, %v; want only the first commit's", rows, err)
	}
	if _, err := h.GetRun(ctx, "run-2"); err != nil {
		t.Fatalf("run-2 created in the same batch: %v", err)
	}
}

func TestFailedCommitFailsWholeBatch(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	if err := h.CreateRun(ctx, newRun("run-1")); err != nil {
		t.Fatal(err)
	}
	release := h.gate(t, ctx, nil)
	// The gate's batch is small: the requests below all wait for the next.
	h.failCommits.Store(true)
	calls := []func() error{
		func() error { return h.CreateRun(ctx, newRun("run-2")) },
		func() error { return h.Commit(ctx, newCommit("run-1", `{"n":1}`, 0)) },
		func() error { _, _, err := h.BeginOperation(ctx, &types.Operation{Key: "op-1"}); return err },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
	}
	h.waitQueued(len(calls))
	_ = release() // the gate's own batch fails too
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, errDiskGone) {
			t.Errorf("request %d = %v, want the COMMIT's error", i, err)
		}
	}
	h.failCommits.Store(false)
	if _, err := h.GetRun(ctx, "run-2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run of a failed batch: %v, want ErrNotFound", err)
	}
	if run, err := h.GetRun(ctx, "run-1"); err != nil || run.Version != 0 {
		t.Errorf("run-1 after a failed batch = %+v, %v; want version 0", run, err)
	}
	if _, err := h.GetOperation(ctx, "op-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("operation of a failed batch: %v, want ErrNotFound", err)
	}
	// The writer survives: the same writes succeed now.
	if err := h.CreateRun(ctx, newRun("run-2")); err != nil {
		t.Fatalf("CreateRun after the failed batch: %v", err)
	}
}

func TestCancelledWhileQueuedIsNotWritten(t *testing.T) {
	h := setup(t)
	release := h.gate(t, t.Context(), nil)
	before := h.Stats()

	ctx, cancel := context.WithCancel(t.Context())
	outcome := make(chan error, 1)
	go func() { outcome <- h.CreateRun(ctx, newRun("run-1")) }()
	h.waitQueued(1)
	cancel()
	if err := <-outcome; !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateRun cancelled in the queue = %v, want context.Canceled", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	// A later write goes through the same queue, after the abandoned one.
	if err := h.CreateRun(t.Context(), newRun("run-2")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetRun(t.Context(), "run-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("abandoned CreateRun was written: GetRun = %v", err)
	}
	if ran := h.Stats().Requests - before.Requests; ran != 1 {
		t.Errorf("writer ran %d requests after the gate, want 1 (the abandoned one skipped)", ran)
	}
}

func TestCancelledAfterTakenGetsTrueOutcome(t *testing.T) {
	h := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	// The gate request is taken and running when its ctx ends; it writes a
	// run and its caller must hear "written", not ctx.Err().
	release := h.gate(t, ctx, func(ctx context.Context, tx *writeTx) error {
		_, err := tx.exec(ctx, queries.InsertRun, "run-1", "", "{}", "{}", "{}", 0, 1, 1)
		return err
	})
	cancel()
	if err := release(); err != nil {
		t.Fatalf("taken request answered %v after its ctx ended, want its true outcome (nil)", err)
	}
	if _, err := h.GetRun(t.Context(), "run-1"); err != nil {
		t.Fatalf("GetRun: %v", err)
	}
}

func TestCloseRunsQueuedWrites(t *testing.T) {
	h := setup(t)
	release := h.gate(t, t.Context(), nil)
	outcome := make(chan error, 1)
	go func() { outcome <- h.CreateRun(context.Background(), newRun("run-1")) }()
	h.waitQueued(1)

	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-outcome; err != nil {
		t.Fatalf("write queued before Close = %v, want nil", err)
	}
	if err := h.CreateRun(t.Context(), newRun("run-2")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("CreateRun after Close = %v, want ErrClosed", err)
	}

	s, err := Open(t.Context(), h.path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetRun(t.Context(), "run-1"); err != nil {
		t.Fatalf("write queued before Close is lost: %v", err)
	}
}

func TestPanickingWriteFailsAlone(t *testing.T) {
	h := setup(t)
	err := h.w.do(t.Context(), func(ctx context.Context, tx *writeTx) error { panic("bug") })
	if err == nil {
		t.Fatal("a panicking write succeeded")
	}
	if err := h.CreateRun(t.Context(), newRun("run-1")); err != nil {
		t.Fatalf("writer after a panicking write: %v", err)
	}
}

// A batch whose requests all succeed runs once, without savepoints; when
// one fails, the batch is rolled back and run again with a savepoint per
// request: the others are written exactly once, the failing one (its
// statements before the failure included) not at all.
func TestFailedRequestRerunsItsBatch(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	if err := h.CreateRun(ctx, newRun("run-1")); err != nil {
		t.Fatal(err)
	}
	release := h.gate(t, ctx, nil)
	before := h.Stats()

	var applied [3]atomic.Int32
	errBoom := errors.New("boom")
	insertRun := func(tx *writeTx, id string) error {
		_, err := tx.exec(ctx, queries.InsertRun, id, "", "{}", "{}", "{}", 0, 1, 1)
		return err
	}
	// In this order, all in one batch: a commit, a request that writes and
	// then fails, a panicking one, a new run, another commit.
	calls := []func() error{
		func() error { return h.Commit(ctx, newCommit("run-1", `{"n":1}`, 0)) },
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
				applied[0].Add(1)
				if err := insertRun(tx, "run-failed"); err != nil {
					return err
				}
				return errBoom
			})
		},
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
				applied[1].Add(1)
				if err := insertRun(tx, "run-panicked"); err != nil {
					return err
				}
				panic("bug")
			})
		},
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
				applied[2].Add(1)
				return insertRun(tx, "run-2")
			})
		},
		func() error { return h.Commit(ctx, newCommit("run-1", `{"n":2}`, 1)) },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		h.waitQueued(1)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	after := h.Stats()
	if d := after.Batches - before.Batches; d != 1 {
		t.Fatalf("the requests ran in %d transactions, want 1", d)
	}
	if d := after.Reruns - before.Reruns; d != 1 {
		t.Errorf("reruns = %d, want 1", d)
	}
	if errs[0] != nil || !errors.Is(errs[1], errBoom) || errs[2] == nil || errs[3] != nil || errs[4] != nil {
		t.Fatalf("outcomes = %v; want nil, boom, a panic, nil, nil", errs)
	}
	// The failing request ran in the first pass and in the re-run; the
	// requests after it only in the re-run: the first pass stopped at the
	// failure.
	if a, b, c := applied[0].Load(), applied[1].Load(), applied[2].Load(); a != 2 || b != 1 || c != 1 {
		t.Errorf("applied %d, %d, %d times; want 2, 1, 1", a, b, c)
	}
	run, err := h.GetRun(ctx, "run-1")
	if err != nil || run.Version != 2 || string(run.State) != `{"n":2}` {
		t.Fatalf("run-1 = %+v, %v; want version 2, state of the second commit", run, err)
	}
	rows, err := h.ListExecutions(ctx, types.ExecutionFilter{RunID: "run-1", Ascending: true})
	if err != nil || len(rows) != 2 || rows[0].Version != 1 || rows[1].Version != 2 {
		t.Fatalf("run-1 rows = %+v, %v; want versions 1 and 2, once each", rows, err)
	}
	for _, id := range []string{"run-failed", "run-panicked"} {
		if _, err := h.GetRun(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: GetRun = %v, want ErrNotFound (rolled back)", id, err)
		}
	}
	if _, err := h.GetRun(ctx, "run-2"); err != nil {
		t.Errorf("run-2: %v", err)
	}
	var runs int
	if err := h.readDB.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&runs); err != nil || runs != 2 {
		t.Errorf("%d runs, %v; want 2 (run-1, run-2)", runs, err)
	}
}

// A batch without failures runs once.
func TestBatchWithoutFailureRunsOnce(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	release := h.gate(t, ctx, nil)
	before := h.Stats()
	var applied atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
				applied.Add(1)
				_, err := tx.exec(ctx, queries.InsertRun, fmt.Sprintf("run-%d", i), "", "{}", "{}", "{}", 0, 1, 1)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
		h.waitQueued(1)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	after := h.Stats()
	if n := applied.Load(); n != 8 || after.Reruns != before.Reruns || after.Batches-before.Batches != 1 {
		t.Errorf("8 requests applied %d times in %d batches with %d reruns; want 8, 1, 0",
			n, after.Batches-before.Batches, after.Reruns-before.Reruns)
	}
}

// A request that fails first in its transaction needs no re-run: the
// rollback undoes it alone, and the others run on in a new transaction.
func TestFirstRequestFailingNeedsNoRerun(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	release := h.gate(t, ctx, nil)
	before := h.Stats()
	errBoom := errors.New("boom")
	insertRun := func(ctx context.Context, tx *writeTx, id string) error {
		_, err := tx.exec(ctx, queries.InsertRun, id, "", "{}", "{}", "{}", 0, 1, 1)
		return err
	}
	calls := []func() error{
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
				if err := insertRun(ctx, tx, "run-failed"); err != nil {
					return err
				}
				return errBoom
			})
		},
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error { return insertRun(ctx, tx, "run-1") })
		},
		func() error {
			return h.w.do(ctx, func(ctx context.Context, tx *writeTx) error { return insertRun(ctx, tx, "run-2") })
		},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		h.waitQueued(1)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(errs[0], errBoom) || errs[1] != nil || errs[2] != nil {
		t.Fatalf("outcomes %v; want boom, nil, nil", errs)
	}
	after := h.Stats()
	if after.Batches-before.Batches != 1 || after.Reruns != before.Reruns {
		t.Errorf("%d batches, %d reruns; want 1, 0", after.Batches-before.Batches, after.Reruns-before.Reruns)
	}
	if _, err := h.GetRun(ctx, "run-failed"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run of the failed request: %v, want ErrNotFound", err)
	}
	for _, id := range []string{"run-1", "run-2"} {
		if _, err := h.GetRun(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// The writer's statements bypass database/sql: its argument conversion and
// its Scan are redone for the kinds the store uses.
func TestWriteTxConvertsLikeDatabaseSQL(t *testing.T) {
	h := setup(t)
	ctx := t.Context()
	type status string
	type count int32
	var (
		i64     int64
		i       int
		s       string
		st      status
		c       count
		b       bool
		f       float64
		blob    []byte
		null    json.RawMessage
		text    json.RawMessage
		created time.Time
	)
	err := h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		return tx.queryRow(ctx, `SELECT ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?`,
			[]any{int64(1) << 40, 7, "text", status("completed"), count(3), true, 1.5, []byte{0, 1}, `{"a":1}`, int64(1e18)},
			&i64, &i, &s, &st, &c, &b, &f, &blob, jsonColumn{&null}, jsonColumn{&text}, timeColumn{&created})
	})
	if err != nil {
		t.Fatal(err)
	}
	if i64 != 1<<40 || i != 7 || s != "text" || st != "completed" || c != 3 || !b || f != 1.5 ||
		string(blob) != "\x00\x01" || null != nil || string(text) != `{"a":1}` || created.UnixNano() != 1e18 {
		t.Errorf("scanned %v %v %q %q %v %v %v %v %v %s %v", i64, i, s, st, c, b, f, blob, null, text, created)
	}
	err = h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		return tx.queryRow(ctx, `SELECT 1 WHERE 0`, nil, &i)
	})
	if !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	err = h.w.do(ctx, func(ctx context.Context, tx *writeTx) error {
		return tx.queryRow(ctx, `SELECT 'x'`, nil, &i)
	})
	if err == nil {
		t.Error("text scanned into an int without an error")
	}
}
