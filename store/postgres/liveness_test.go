package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// openPeer opens a second store ("replica") on the schema of s.
func openPeer(t *testing.T, s *postgres.Store, opts postgres.Options) *postgres.Store {
	t.Helper()
	opts.Schema = s.Schema()
	peer, err := postgres.Open(t.Context(), postgrestest.URL(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return peer
}

// lockFree tries the liveness lock of owner from a session of its own,
// and releases it if it got it.
func lockFree(t *testing.T, schema, owner string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), postgrestest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var free bool
	key := postgres.LivenessLockKey(schema, owner)
	if err := conn.QueryRow(t.Context(), "SELECT pg_try_advisory_lock($1)", key).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if free {
		if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_unlock($1)", key); err != nil {
			t.Fatal(err)
		}
	}
	return free
}

// waitLockFree polls until owner's liveness lock is free: a session that
// ended on the client's side ends on the server's a moment later.
func waitLockFree(t *testing.T, schema, owner string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !lockFree(t, schema, owner) {
		if time.Now().After(deadline) {
			t.Fatalf("the liveness lock of %s is still held after 30s", owner)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// terminateLockSession ends, from the server's side, the session that
// holds owner's liveness lock (pg_terminate_backend), as a network cut or
// an operator would.
func terminateLockSession(t *testing.T, schema, owner string) {
	t.Helper()
	key := uint64(postgres.LivenessLockKey(schema, owner))
	conn, err := pgx.Connect(t.Context(), postgrestest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
WHERE locktype = 'advisory' AND objsubid = 1 AND classid = $1 AND objid = $2`, uint32(key>>32), uint32(key)).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminated %d lock sessions of %s, %v; want 1", n, owner, err)
	}
}

// The store holds its liveness lock, under an owner id of its own made
// from Options.Owner, from Open until Close.
func TestLivenessLockHeldUntilClose(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{Owner: "replica-a"})
	f, err := s.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Owner, "replica-a/") || f.Gen != 1 || !s.Holds(f) {
		t.Fatalf("fence %+v (holds %v), want replica-a/..., generation 1, holding", f, s.Holds(f))
	}
	peer := openPeer(t, s, postgres.Options{Owner: "replica-a"})
	pf, err := peer.Fence()
	if err != nil || pf.Owner == f.Owner {
		t.Fatalf("two stores of one owner name got owner ids %q and %q (%v): they must differ", f.Owner, pf.Owner, err)
	}
	if lockFree(t, s.Schema(), f.Owner) {
		t.Fatal("the liveness lock of a live store was free")
	}
	if got, err := peer.TakeOver(t.Context(), f.Owner); got || err != nil {
		t.Fatalf("TakeOver of a live owner = %v, %v; want false", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitLockFree(t, s.Schema(), f.Owner)
}

// TakeOver surfaces the started operations of an owner whose liveness
// lock is free, but only once TakeoverDelay has passed since it was first
// found free; a live owner's operations and other owners' are left alone.
func TestTakeOverAfterDelay(t *testing.T) {
	const delay = 3 * time.Second
	a := postgrestest.Open(t, postgres.Options{Owner: "a"})
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := openPeer(t, a, postgres.Options{Owner: "b", Liveness: postgres.LivenessOptions{
		Keepalive: 100 * time.Millisecond, Bound: 2 * time.Second, TakeoverDelay: delay, Clock: fake}})
	fa, err := a.Fence()
	if err != nil {
		t.Fatal(err)
	}
	lease := time.Now().Add(time.Hour)
	for _, op := range []*types.Operation{
		{Key: "a1", ArgsHash: "h", RunID: "r", Tool: "t", Owner: fa.Owner, LeaseUntil: lease},
		{Key: "a2", ArgsHash: "h", RunID: "r", Tool: "t", Owner: fa.Owner, LeaseUntil: lease},
		{Key: "other", ArgsHash: "h", RunID: "r", Tool: "t", Owner: "someone-else", LeaseUntil: lease},
	} {
		if _, began, err := b.BeginOperation(t.Context(), op); err != nil || !began {
			t.Fatalf("BeginOperation %s = %v, %v", op.Key, began, err)
		}
	}
	if got, err := b.TakeOver(t.Context(), fa.Owner); got || err != nil {
		t.Fatalf("TakeOver of live a = %v, %v; want false", got, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitLockFree(t, a.Schema(), fa.Owner)
	// Found free now; the fake clock stands still, then moves to the
	// delay's end (the probe cache lets the next probe through only a
	// Keepalive after the last one).
	fake.Advance(100 * time.Millisecond)
	for _, step := range []struct {
		advance time.Duration
		want    bool
	}{{0, false}, {delay - time.Nanosecond, false}, {time.Nanosecond, true}, {time.Second, true}} {
		fake.Advance(step.advance)
		got, err := b.TakeOver(t.Context(), fa.Owner)
		if err != nil || got != step.want {
			t.Fatalf("TakeOver %s after the lock was found free = %v, %v; want %v", fake.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 100e6, time.UTC)), got, err, step.want)
		}
	}
	want := map[string]types.OpStatus{"a1": types.OpUnknown, "a2": types.OpUnknown, "other": types.OpStarted}
	for key, status := range want {
		op, err := b.GetOperation(t.Context(), key)
		if err != nil || op.Status != status {
			t.Errorf("%s: %+v, %v; want %s", key, op, err, status)
		}
	}
	fb, _ := b.Fence()
	if got, err := b.TakeOver(t.Context(), fb.Owner); got || err != nil {
		t.Errorf("TakeOver of the store's own owner id = %v, %v; want false", got, err)
	}
}

// A store whose lock session is ended from the server's side loses its
// liveness: its old fence never holds again, and it re-acquires its lock
// under a new owner id, whose fence holds.
func TestLivenessLostThenNewOwner(t *testing.T) {
	s := postgrestest.Open(t, postgres.Options{Owner: "cut", Liveness: postgres.LivenessOptions{
		Keepalive: 20 * time.Millisecond, Bound: 500 * time.Millisecond, TakeoverDelay: time.Second}})
	old, err := s.Fence()
	if err != nil {
		t.Fatal(err)
	}
	terminateLockSession(t, s.Schema(), old.Owner)
	deadline := time.Now().Add(30 * time.Second)
	var now store.Fence
	for {
		if now, err = s.Fence(); err == nil && now.Owner != old.Owner {
			break
		}
		if err != nil && !errors.Is(err, store.ErrNotLive) {
			t.Fatalf("Fence = %v, want nil or ErrNotLive", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no new owner id within 30s of the lock session's end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s.Holds(old) {
		t.Error("the fence of the lost owner id still holds")
	}
	if !s.Holds(now) || now.Gen <= old.Gen || !strings.HasPrefix(now.Owner, "cut/") {
		t.Errorf("new fence %+v (holds %v) after %+v: want a later generation that holds", now, s.Holds(now), old)
	}
	waitLockFree(t, s.Schema(), old.Owner)
	if lockFree(t, s.Schema(), now.Owner) {
		t.Error("the new owner id's lock is free")
	}
}

// Inconsistent liveness timings are refused by Open.
func TestLivenessOptionsChecked(t *testing.T) {
	url := postgrestest.URL(t)
	for _, tc := range []struct {
		name string
		o    postgres.LivenessOptions
	}{
		{"bound within keepalive", postgres.LivenessOptions{Keepalive: time.Second, Bound: time.Second}},
		{"takeover within bound", postgres.LivenessOptions{Bound: 2 * time.Second, TakeoverDelay: 2 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: postgrestest.Schema(t, url), Liveness: tc.o})
			if err == nil {
				s.Close()
				t.Fatal("Open accepted the timings")
			}
		})
	}
}

// The background sweep takes a dead owner over without any call meeting
// its operations, long before their leases end.
func TestTakeOverInBackground(t *testing.T) {
	a := postgrestest.Open(t, postgres.Options{Owner: "a"})
	b := openPeer(t, a, postgres.Options{Owner: "b", ExpireLeasesEvery: 10 * time.Millisecond,
		Liveness: postgres.LivenessOptions{Keepalive: 20 * time.Millisecond, Bound: 100 * time.Millisecond, TakeoverDelay: 200 * time.Millisecond}})
	fa, err := a.Fence()
	if err != nil {
		t.Fatal(err)
	}
	op := &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t", Owner: fa.Owner, LeaseUntil: time.Now().Add(time.Hour)}
	if _, began, err := a.BeginOperation(t.Context(), op); err != nil || !began {
		t.Fatalf("BeginOperation = %v, %v", began, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := b.GetOperation(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == types.OpUnknown {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation of the closed owner still %s after 30s of background sweeps", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
