package storetest

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

var statsCases = []testCase{
	{"SaveLoadReplace", testStatsSaveLoad},
	{"Prune", testStatsPrune},
}

func testStatsSaveLoad(t *testing.T, s store.Store) {
	b := func(tool, replica string, start time.Duration, data string) store.StatsBucket {
		return store.StatsBucket{Tool: tool, Replica: replica, Start: at(start), Width: time.Minute, Data: []byte(data)}
	}
	if err := s.SaveStats(t.Context(), []store.StatsBucket{
		b("refund", "a", 0, "a0"), b("refund", "b", 0, "b0"), b("lookup", "a", time.Minute, "a1"), b("refund", "a", 2*time.Minute, "a2"),
	}); err != nil {
		t.Fatal(err)
	}
	// Replace one bucket: same tool, start and replica.
	if err := s.SaveStats(t.Context(), []store.StatsBucket{b("refund", "a", 0, "a0-v2")}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadStats(t.Context(), at(0))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"refund/a/a0-v2", "refund/b/b0", "lookup/a/a1", "refund/a/a2"}
	if len(got) != len(want) {
		t.Fatalf("LoadStats returned %d buckets, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		if s := g.Tool + "/" + g.Replica + "/" + string(g.Data); s != want[i] {
			t.Errorf("bucket %d = %s, want %s", i, s, want[i])
		}
		if g.Width != time.Minute {
			t.Errorf("bucket %d width = %s", i, g.Width)
		}
	}
	later, err := s.LoadStats(t.Context(), at(time.Minute))
	if err != nil || len(later) != 2 {
		t.Fatalf("LoadStats(since 1m) = %d buckets, %v; want 2", len(later), err)
	}
	checkTime(t, "bucket start", later[0].Start, at(time.Minute))
}

func testStatsPrune(t *testing.T, s store.Store) {
	if err := s.SaveStats(t.Context(), []store.StatsBucket{
		{Tool: "t", Replica: "r", Start: at(0), Width: time.Minute, Data: []byte("old")},
		{Tool: "t", Replica: "r", Start: at(time.Hour), Width: time.Minute, Data: []byte("new")},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(t.Context(), at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadStats(t.Context(), at(0))
	if err != nil || len(got) != 1 || string(got[0].Data) != "new" {
		t.Fatalf("after prune: %+v, %v", got, err)
	}
}
