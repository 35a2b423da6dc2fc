package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// withOps adds an approver key (a person's) and a write tool that commits.
func withOps(c *config.Config) {
	c.Auth.Keys = append(c.Auth.Keys, config.Key{Name: "ops", Key: opsKey, Approver: true})
	c.Tools["note"] = &config.Tool{Description: "Writes a note.", Effect: types.EffectWrite,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
		State:       map[string]string{"noted": "args.n"},
		Func:        func(ctx context.Context, args json.RawMessage) (any, error) { return map[string]any{"ok": true}, nil }}
}

// A call whose side effect was unknown is linked to the first later call
// of the same operation whose side effect is known, and back.
func TestLinkSettlements(t *testing.T) {
	row := func(step int64, key string, se types.SideEffect) types.Execution {
		return types.Execution{Step: step, OperationKey: key, SideEffect: se}
	}
	for _, tc := range []struct {
		name    string
		rows    []types.Execution
		settled map[int64]int64   // step -> settled_by
		settles map[int64][]int64 // step -> settles
	}{
		{"verified by the repeat", []types.Execution{row(1, "op:a", types.SideEffectUnknown), row(2, "", types.SideEffectNone), row(3, "op:a", types.SideEffectCommitted)},
			map[int64]int64{1: 3}, map[int64][]int64{3: {1}}},
		{"two unknowns, one settlement", []types.Execution{row(1, "op:a", types.SideEffectUnknown), row(2, "op:a", types.SideEffectUnknown), row(3, "op:a", types.SideEffectNone)},
			map[int64]int64{1: 3, 2: 3}, map[int64][]int64{3: {1, 2}}},
		{"another operation does not settle it", []types.Execution{row(1, "op:a", types.SideEffectUnknown), row(2, "op:b", types.SideEffectCommitted)},
			map[int64]int64{}, map[int64][]int64{}},
		{"not settled yet", []types.Execution{row(1, "op:a", types.SideEffectUnknown)}, map[int64]int64{}, map[int64][]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := make([]HistoryEntry, len(tc.rows))
			for i := range tc.rows {
				h[i].Step = tc.rows[i].Step
			}
			linkSettlements(h, tc.rows)
			for _, e := range h {
				if e.SettledBy != tc.settled[e.Step] || len(e.Settles) != len(tc.settles[e.Step]) {
					t.Errorf("step %d: settled_by %d, settles %v; want %d, %v", e.Step, e.SettledBy, e.Settles, tc.settled[e.Step], tc.settles[e.Step])
				}
				for i := range e.Settles {
					if e.Settles[i] != tc.settles[e.Step][i] {
						t.Errorf("step %d settles %v, want %v", e.Step, e.Settles, tc.settles[e.Step])
					}
				}
			}
		})
	}
}

// GET /v1/runs/{run} carries what the console's trace needs (initial
// state, each call's end); key= shows another key's run to an approver key
// only.
func TestRunPageFields(t *testing.T) {
	b := setup(t, setupOpts{config: withOps})
	b.startRun(alphaKey, `{"run_id":"r1","principal":{"id":"cust_42"},"state":{"noted":0}}`)
	if res := b.post("/v1/runs/r1/calls", alphaKey, `{"tool":"note","args":{"n":7}}`).envelope(t); !res.OK {
		t.Fatalf("note: %+v", res)
	}
	var doc struct {
		Approvals    json.RawMessage `json:"approvals"`
		InitialState json.RawMessage `json:"initial_state"`
		History      []struct {
			StartedAt  time.Time       `json:"started_at"`
			FinishedAt time.Time       `json:"finished_at"`
			StatePatch json.RawMessage `json:"state_patch"`
		} `json:"history"`
	}
	b.get("/v1/runs/r1", alphaKey).decode(t, &doc)
	// approvals is [] when the store keeps approvals and none was asked
	// for: absent would say the store keeps none.
	if string(doc.Approvals) != `[]` || string(doc.InitialState) != `{"noted":0}` || len(doc.History) != 1 || doc.History[0].FinishedAt.Before(doc.History[0].StartedAt) ||
		doc.History[0].FinishedAt.IsZero() || string(doc.History[0].StatePatch) != `{"noted":7}` {
		t.Errorf("run document: %+v", doc)
	}
	for _, tc := range []struct {
		path, key string
		status    int
	}{
		{"/v1/runs/r1?key=alpha", opsKey, http.StatusOK},
		{"/v1/runs/r1/replay?key=alpha", opsKey, http.StatusOK},
		{"/v1/runs/r1?key=alpha", alphaKey, http.StatusOK},
		{"/v1/runs/r1?key=alpha", betaKey, http.StatusForbidden},
		{"/v1/runs/r1", opsKey, http.StatusNotFound},
		{"/v1/runs/r1?key=beta", opsKey, http.StatusNotFound},
		{"/v1/executions?run=r1&key=alpha", opsKey, http.StatusOK},
		{"/v1/executions?run=r1&key=alpha", betaKey, http.StatusForbidden},
		{"/v1/executions?key=alpha", opsKey, http.StatusBadRequest},
	} {
		if got := b.get(tc.path, tc.key); got.status != tc.status {
			t.Errorf("GET %s as %s: %d %s, want %d", tc.path, tc.key[:4], got.status, got.body, tc.status)
		}
	}
	var rows ExecutionList
	b.get("/v1/executions?run=r1&key=alpha", opsKey).decode(t, &rows)
	if len(rows.Executions) != 1 || rows.Executions[0].RunID != "r1" {
		t.Errorf("alpha's rows as ops sees them: %+v", rows.Executions)
	}
}

// GET /v1/summary counts the calls and the effects committed in the
// window: every key's for an approver key, its own runs' for another.
func TestSummary(t *testing.T) {
	b := setup(t, setupOpts{config: withOps})
	b.startRun(alphaKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`)
	for _, call := range []string{`{"tool":"note","args":{"n":1}}`, `{"tool":"note","args":{"n":2}}`, `{"tool":"echo","args":{"n":3}}`, `{"tool":"nope","args":{}}`} {
		b.post("/v1/runs/r1/calls", alphaKey, call)
	}
	// A fifth call of alpha's ended with an unknown outcome.
	st, runID := b.gw.Store(), types.ScopedRunID("alpha", "r1")
	if _, _, err := st.BeginOperation(t.Context(), &types.Operation{Key: "op-unknown", RunID: runID, Tool: "note", Status: types.OpStarted}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(t.Context(), &store.Commit{Execution: &types.Execution{RunID: runID, Tool: "note", SideEffect: types.SideEffectUnknown,
		FinishedAt: time.Now()}, Operation: &store.OperationUpdate{Key: "op-unknown", Status: types.OpUnknown}}); err != nil {
		t.Fatal(err)
	}
	var sum Summary
	b.get("/v1/summary?window=1h", opsKey).decode(t, &sum)
	if sum.Calls != 5 || sum.EffectsCommitted != 2 || sum.UnknownOutcomes != 1 || sum.ApprovalsWaiting != 0 || sum.BreakersOpen != 0 || sum.Window != "1h" {
		t.Errorf("summary: %+v; want 5 calls, 2 effects committed, 1 unknown outcome", sum)
	}
	// Another key counts its own runs' calls and unknown outcomes only.
	var own Summary
	b.get("/v1/summary", betaKey).decode(t, &own)
	if own.Calls != 0 || own.EffectsCommitted != 0 || own.UnknownOutcomes != 0 {
		t.Errorf("beta's summary: %+v; want none of alpha's calls", own)
	}
	b.get("/v1/summary", alphaKey).decode(t, &own)
	if own.Calls != 5 || own.EffectsCommitted != 2 || own.UnknownOutcomes != 1 {
		t.Errorf("alpha's summary: %+v; want its 5 calls, 2 effects, 1 unknown outcome", own)
	}
	for _, tc := range []struct {
		path, key string
		status    int
	}{
		{"/v1/summary?window=soon", opsKey, http.StatusBadRequest},
		{"/v1/summary?tool=note", opsKey, http.StatusBadRequest},
	} {
		if got := b.get(tc.path, tc.key); got.status != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.path, got.status, got.body, tc.status)
		}
	}
}
