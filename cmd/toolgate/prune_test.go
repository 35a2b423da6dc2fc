package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

func TestPruneKeepsOpenOperations(t *testing.T) {
	cfgPath := writeConfig(t, "http://127.0.0.1:1")
	dbURL := "sqlite:" + filepath.Join(filepath.Dir(cfgPath), "tg.db")
	ctx := context.Background()
	st, err := storeurl.Open(ctx, dbURL, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-1000 * time.Hour)
	st.CreateRun(ctx, &types.Run{ID: "r1", State: json.RawMessage(`{}`)})
	for _, key := range []string{"done", "open", "unsure"} {
		st.BeginOperation(ctx, &types.Operation{Key: key, ArgsHash: "h", RunID: "r1", Tool: "t", LeaseUntil: old, CreatedAt: old})
	}
	st.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r1", Tool: "t", Code: "ok", StartedAt: old, FinishedAt: old, Result: json.RawMessage(`{}`)},
		Operation: &store.OperationUpdate{Key: "done", Status: types.OpCompleted, Result: json.RawMessage(`{}`), At: old}})
	st.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r1", Tool: "t", Code: "ok", StartedAt: old, FinishedAt: old, Result: json.RawMessage(`{}`)},
		Operation: &store.OperationUpdate{Key: "unsure", Status: types.OpUnknown, At: old}})
	st.Close()

	var out, errOut bytes.Buffer
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"prune", "--config", cfgPath, "--older-than", "720h"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Deleted 3 record(s)") {
		t.Errorf("output: %s", out.String())
	}
	st, _ = storeurl.Open(ctx, dbURL, storeurl.Options{})
	defer st.Close()
	for key, want := range map[string]bool{"done": false, "open": true, "unsure": true} {
		_, err := st.GetOperation(ctx, key)
		if got := err == nil; got != want {
			t.Errorf("operation %s kept = %v, want %v", key, got, want)
		}
	}
	if code := run(ctx, &env{stdout: &out, stderr: &errOut}, []string{"prune", "--config", cfgPath}); code != 2 {
		t.Errorf("prune without --older-than: exit %d, want 2", code)
	}
}
