package sqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// cachedCopy is the run cache's copy of a run, or nil.
func cachedCopy(s *Store, id string) *types.Run {
	r, _ := s.runs.get(id)
	return r
}

// TestRunCacheMatchesFile: after each kind of write to a run, the run the
// cache gives is the run the file holds, as a store that reads the file
// afresh sees it, and it did come from the cache.
func TestRunCacheMatchesFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	s, err := Open(ctx, path, Options{Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &types.Run{ID: "r1", Owner: "k", MaxSteps: 10, State: json.RawMessage(`{"n":1}`),
		Principal: types.Principal{ID: "u", Permissions: []string{"p"}, Limits: map[string]json.Number{"max": "9007199254740993"},
			Attrs: map[string]any{"tier": "gold", "n": json.Number("2"), "tags": []any{"a"}}}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	exec := func(n int) *types.Execution {
		return &types.Execution{RunID: "r1", Tool: "t", CallID: "c", Code: types.CodeOK, OK: true,
			StartedAt: at, FinishedAt: at.Add(time.Duration(n) * time.Millisecond), Result: json.RawMessage(`{"ok":true}`)}
	}
	steps := []struct {
		name  string
		write func() error
	}{
		{"AdmitStep", func() error { _, err := s.AdmitStep(ctx, "r1"); return err }},
		{"Commit with state", func() error {
			r, err := s.GetRun(ctx, "r1")
			if err != nil {
				return err
			}
			return s.Commit(ctx, &store.Commit{Execution: exec(1), NewState: json.RawMessage(`{"n":2}`), ExpectVersion: r.Version})
		}},
		{"Commit", func() error { return s.Commit(ctx, &store.Commit{Execution: exec(2)}) }},
		{"Commit taking a step", func() error {
			return s.Commit(ctx, &store.Commit{Execution: exec(3), TakeStep: func(int64) json.RawMessage { return json.RawMessage(`{}`) }})
		}},
		{"AdmitAndBegin", func() error {
			_, _, _, err := s.AdmitAndBegin(ctx, "r1", &types.Operation{Key: "op1", RunID: "r1", Tool: "t", ArgsHash: "h"})
			return err
		}},
		{"Commit settling the operation, with state", func() error {
			r, err := s.GetRun(ctx, "r1")
			if err != nil {
				return err
			}
			return s.Commit(ctx, &store.Commit{Execution: exec(4), Operation: &store.OperationUpdate{Key: "op1", Status: types.OpCompleted},
				NewState: json.RawMessage(`{"n":3}`), ExpectVersion: r.Version})
		}},
	}
	if _, err := s.GetRun(ctx, "r1"); err != nil { // fills the cache
		t.Fatal(err)
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := cachedCopy(s, "r1")
		if got == nil {
			t.Fatalf("%s: the run is not in the cache", st.name)
		}
		fresh, err := Open(ctx, path, Options{Owner: "b"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.GetRun(ctx, "r1")
		fresh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: cached run\n%+v\nthe file's\n%+v", st.name, got, want)
		}
	}
	// The copies handed out are the caller's own.
	r, _ := s.GetRun(ctx, "r1")
	r.Principal.Permissions[0], r.Principal.Attrs["tier"] = "changed", "changed"
	if again, _ := s.GetRun(ctx, "r1"); again.Principal.Permissions[0] != "p" || again.Principal.Attrs["tier"] != "gold" {
		t.Fatalf("a caller's change reached the cache: %+v", again.Principal)
	}
}

// TestRunCacheSeesOtherProcesses: a write by another connection to the
// file (another process: toolgate reconcile) empties the cache at the
// writer's next transaction, so GetRun reads the file again.
func TestRunCacheSeesOtherProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolgate.db")
	a, err := Open(ctx, path, Options{Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, id := range []string{"r1", "r2"} {
		if err := a.CreateRun(ctx, &types.Run{ID: id, Owner: "k", State: json.RawMessage(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := a.GetRun(ctx, "r1")
	if err != nil || cachedCopy(a, "r1") == nil {
		t.Fatalf("GetRun: %v; cached: %v", err, cachedCopy(a, "r1") != nil)
	}

	b, err := Open(ctx, path, Options{Owner: "b"})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r1", Tool: "t", Code: types.CodeOK},
		NewState: json.RawMessage(`{"n":99}`), ExpectVersion: r.Version})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}

	// Any write of a's, to any run, is a transaction that notices.
	if _, err := a.AdmitStep(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	got, err := a.GetRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.State) != `{"n":99}` || got.Version != r.Version+1 {
		t.Fatalf("after another process's commit: state %s version %d; want {\"n\":99} at %d", got.State, got.Version, r.Version+1)
	}
}

// TestRunCacheKeepsNoOlderRead: a run read from the file before a write
// (a read that raced it) is not kept once the cache knows of the write.
func TestRunCacheKeepsNoOlderRead(t *testing.T) {
	c := newRunCache()
	c.checked(false)
	old := &types.Run{ID: "r", Version: 4, Step: 2}
	_, epoch := c.get("r")
	c.committed("r", 5, nil, 0, time.Time{}) // the write lands first
	c.fill(old, epoch)
	if r, _ := c.get("r"); r != nil {
		t.Fatalf("kept an older read: %+v", r)
	}
	c.stepped("r", 3, time.Time{})
	c.fill(&types.Run{ID: "r", Version: 5, Step: 2}, epoch)
	if r, _ := c.get("r"); r != nil {
		t.Fatalf("kept a read older than a step taken: %+v", r)
	}
	c.fill(&types.Run{ID: "r", Version: 5, Step: 3}, epoch)
	if r, _ := c.get("r"); r == nil || r.Version != 5 || r.Step != 3 {
		t.Fatalf("a current read was not kept: %+v", r)
	}
	// A later commit applies on top; one that skips a version empties it.
	c.committed("r", 6, json.RawMessage(`{"x":1}`), 4, time.Time{})
	if r, _ := c.get("r"); r == nil || r.Version != 6 || r.Step != 4 || string(r.State) != `{"x":1}` {
		t.Fatalf("after a commit: %+v", r)
	}
	c.committed("r", 8, nil, 0, time.Time{})
	if r, _ := c.get("r"); r != nil {
		t.Fatalf("kept a run across a commit it did not see: %+v", r)
	}
	// A read begun before the cache was emptied is not kept.
	_, epoch = c.get("q")
	c.checked(true)
	c.fill(&types.Run{ID: "q", Version: 1}, epoch)
	if r, _ := c.get("q"); r != nil {
		t.Fatalf("kept a read from before the cache was emptied: %+v", r)
	}
}
