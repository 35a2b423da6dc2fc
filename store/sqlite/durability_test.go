package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// syncGate is an fsync hook that the tests can hold or make fail.
type syncGate struct {
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
	fail    atomic.Pointer[error]
}

func newSyncGate() *syncGate {
	return &syncGate{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *syncGate) sync(f *os.File) error {
	if err := g.fail.Load(); err != nil {
		return *err
	}
	if g.hold.Load() {
		g.entered <- struct{}{}
		<-g.release
	}
	return f.Sync()
}

// openSynced opens a store in a temporary file whose fsyncs of the WAL go
// through g, with one run "r".
func openSynced(t *testing.T, h hooks) *Store {
	t.Helper()
	s, err := open(t.Context(), filepath.Join(t.TempDir(), "tg.db"), Options{}, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.CreateRun(t.Context(), &types.Run{ID: "r", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	return s
}

// synchronous reads the write connection's own PRAGMA synchronous.
func synchronous(t *testing.T, s *Store) int {
	t.Helper()
	var m int
	err := s.w.do(t.Context(), func(ctx context.Context, tx *writeTx) error {
		return tx.queryRow(ctx, "PRAGMA synchronous", nil, &m)
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newOp(key string) *types.Operation {
	return &types.Operation{Key: key, ArgsHash: "h", RunID: "r", Tool: "t", LeaseUntil: time.Now().Add(time.Hour)}
}

// The writer commits every batch without an fsync; a batch holding an
// effect is answered only after the fsyncer's fsync of the WAL, a batch of
// writes that record none (a step, the row of a read) at once.
func TestEffectsAreAnsweredAfterTheFsync(t *testing.T) {
	g := newSyncGate()
	s := openSynced(t, hooks{sync: g.sync})
	ctx := t.Context()
	const normal = 1
	if got := synchronous(t, s); got != normal {
		t.Fatalf("write connection at synchronous=%d, want NORMAL (%d)", got, normal)
	}

	g.hold.Store(true)
	began := make(chan error, 1)
	go func() {
		_, _, err := s.BeginOperation(ctx, newOp("k"))
		began <- err
	}()
	<-g.entered // the fsync for the operation's batch has begun, and waits
	select {
	case err := <-began:
		t.Fatalf("BeginOperation answered (%v) before the fsync of its batch ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	// Light writes do not wait for it.
	lightBefore := s.Stats().LightBatches
	if _, err := s.AdmitStep(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	row := &types.Execution{RunID: "r", Tool: "t", Code: "ok", StartedAt: time.Now(), FinishedAt: time.Now(), Result: json.RawMessage(`{}`)}
	if err := s.Commit(ctx, &store.Commit{Execution: row}); err != nil {
		t.Fatal(err)
	}
	if d := s.Stats().LightBatches - lightBefore; d != 2 {
		t.Errorf("light batches = %d, want 2", d)
	}
	g.hold.Store(false)
	close(g.release)
	if err := <-began; err != nil {
		t.Fatalf("BeginOperation: %v", err)
	}
	if s.Stats().Syncs == 0 {
		t.Error("no fsync counted")
	}
}

// A failed fsync fails the writes waiting for it, and every later one:
// the kernel may have dropped the pages it could not write, so no later
// fsync can be trusted to cover them.
func TestFailedFsyncStopsWrites(t *testing.T) {
	g := newSyncGate()
	s := openSynced(t, hooks{sync: g.sync})
	ctx := t.Context()
	errEIO := errors.New("injected: input/output error")
	g.fail.Store(&errEIO)
	if _, _, err := s.BeginOperation(ctx, newOp("k")); !errors.Is(err, errEIO) {
		t.Fatalf("BeginOperation with a failing fsync = %v, want the fsync's error", err)
	}
	g.fail.Store(nil)
	if _, _, err := s.BeginOperation(ctx, newOp("k2")); !errors.Is(err, errEIO) {
		t.Errorf("BeginOperation after a failed fsync = %v, want its error", err)
	}
	if _, err := s.AdmitStep(ctx, "r"); !errors.Is(err, errEIO) {
		t.Errorf("AdmitStep after a failed fsync = %v, want its error", err)
	}
	if _, err := s.GetRun(ctx, "r"); err != nil {
		t.Errorf("reads go on: GetRun = %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, errEIO) {
		t.Errorf("Ping after a failed fsync = %v, want its error (health checks must fail)", err)
	}
}

// Without the fsyncer (a file not in WAL mode), every COMMIT fsyncs
// itself: synchronous=FULL.
func TestWithoutWALEveryCommitFsyncs(t *testing.T) {
	s := openSynced(t, hooks{noWALSync: true})
	ctx := t.Context()
	const full = 2
	if got := synchronous(t, s); got != full {
		t.Fatalf("write connection at synchronous=%d, want FULL (%d)", got, full)
	}
	if _, _, err := s.BeginOperation(ctx, newOp("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitStep(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Syncs != 0 || st.LightBatches != 1 {
		t.Errorf("stats %+v: want no fsync by the fsyncer, one light batch", st)
	}
}

// The fsyncer fsyncs the file SQLite writes its WAL to.
func TestFsyncerHoldsTheWAL(t *testing.T) {
	s := openSynced(t, hooks{})
	if s.w.durable == nil {
		t.Fatal("no fsyncer on a WAL file")
	}
	opened, err := s.w.durable.file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(filepath.Join(filepath.Dir(s.w.durable.name), "tg.db-wal"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(opened, wal) {
		t.Errorf("fsyncer holds %s, not the WAL", s.w.durable.name)
	}
}

// While the fsync of a batch is being made, the next batch stays open and
// takes the requests that arrive: they all wait for the fsync after it. A
// failure among them is that request's alone, before or after it.
func TestBatchStaysOpenDuringTheFsync(t *testing.T) {
	g := newSyncGate()
	queued := make(chan struct{}, 64)
	s := openSynced(t, hooks{sync: g.sync, enqueued: func() { queued <- struct{}{} }})
	ctx := t.Context()
	drain := func() {
		for len(queued) > 0 {
			<-queued
		}
	}
	drain()
	before := s.Stats()

	g.hold.Store(true)
	type outcome struct {
		name string
		err  error
	}
	outcomes := make(chan outcome, 8)
	call := func(name string, f func() error) {
		go func() { outcomes <- outcome{name, f()} }()
		<-queued
	}
	// Its fsync is held: the batches after it wait for it.
	call("first", func() error { _, _, err := s.BeginOperation(ctx, newOp("k1")); return err })
	<-g.entered
	// The next batch: taken one at a time, as each is queued, into the
	// transaction held open for the fsync.
	ran := func(n uint64) {
		for s.Stats().Requests-before.Requests < n {
			time.Sleep(time.Millisecond)
		}
	}
	call("op", func() error { _, _, err := s.BeginOperation(ctx, newOp("k2")); return err })
	ran(2)
	call("duplicate", func() error { return s.CreateRun(ctx, &types.Run{ID: "r", State: json.RawMessage(`{}`)}) })
	ran(3)
	call("run", func() error { return s.CreateRun(ctx, &types.Run{ID: "r2", State: json.RawMessage(`{}`)}) })
	ran(4)
	select {
	case o := <-outcomes:
		t.Fatalf("%s answered (%v) before the fsyncs", o.name, o.err)
	case <-time.After(20 * time.Millisecond):
	}
	g.hold.Store(false)
	close(g.release)
	got := map[string]error{}
	for range 4 {
		o := <-outcomes
		got[o.name] = o.err
	}
	if got["first"] != nil || got["op"] != nil || !errors.Is(got["duplicate"], store.ErrRunExists) || got["run"] != nil {
		t.Fatalf("outcomes %v; want nil but ErrRunExists for the duplicate", got)
	}
	after := s.Stats()
	if d := after.Batches - before.Batches; d != 2 {
		t.Errorf("%d batches, want 2: the first, and the one held open for its fsync", d)
	}
	if d := after.Reruns - before.Reruns; d != 1 {
		t.Errorf("%d reruns, want 1", d)
	}
	for _, key := range []string{"k1", "k2"} {
		if _, err := s.GetOperation(ctx, key); err != nil {
			t.Errorf("operation %s: %v", key, err)
		}
	}
	if _, err := s.GetRun(ctx, "r2"); err != nil {
		t.Errorf("run r2: %v", err)
	}
}

// Close waits for the fsync of the last batch and answers it.
func TestCloseAnswersAfterTheLastFsync(t *testing.T) {
	g := newSyncGate()
	s := openSynced(t, hooks{sync: g.sync})
	ctx := t.Context()
	g.hold.Store(true)
	began := make(chan error, 1)
	go func() {
		_, _, err := s.BeginOperation(ctx, newOp("k"))
		began <- err
	}()
	<-g.entered
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the fsync ended", err)
	case <-time.After(20 * time.Millisecond):
	}
	g.hold.Store(false)
	close(g.release)
	if err := <-began; err != nil {
		t.Fatalf("BeginOperation: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
