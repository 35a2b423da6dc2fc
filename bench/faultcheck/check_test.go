package faultcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// history is a small history for Check: a run "r" with a refund per op,
// each made by the provider, completed in the ledger and committed with
// its row and its state change; break mutates it into one violation.
type history struct {
	ops     []string // orders
	calls   []*Call
	effects map[string]int
	// mutations, applied while building
	skipLedger, skipRow, unknownMade, startedLeft string
	wrongState                                    bool
}

func (h *history) build(t *testing.T) Input {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	state := json.RawMessage(`{"refunded_paise":0,"keyed_paise":0}`)
	if err := st.CreateRun(ctx, &types.Run{ID: "r", State: state}); err != nil {
		t.Fatal(err)
	}
	sum, version := int64(0), int64(0)
	for i, order := range h.ops {
		amount := int64(100 + i)
		c := &Call{ID: fmt.Sprintf("c-%d", i), Run: "r", Tool: ToolVerified, Order: order, Amount: amount,
			Sent: time.Now(), Took: time.Second, Status: http.StatusOK}
		c.Result = types.Result{OK: true, Meta: types.Meta{CallID: c.ID, SideEffect: types.SideEffectCommitted}}
		h.calls = append(h.calls, c)
		if order == h.skipLedger {
			continue
		}
		key := "op-" + order
		op := &types.Operation{Key: key, RunID: "r", Tool: ToolVerified, Status: types.OpStarted,
			Args: json.RawMessage(fmt.Sprintf(`{"order_id":%q,"amount_paise":%d}`, order, amount))}
		if _, _, err := st.BeginOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		if order == h.startedLeft {
			continue
		}
		status := types.OpCompleted
		if order == h.unknownMade {
			status = types.OpUnknown
		}
		callID := c.ID
		if order == h.skipRow {
			callID = "other-" + order // the row is another call's
		}
		commit := &store.Commit{Execution: &types.Execution{RunID: "r", CallID: callID, Code: types.CodeOK},
			Operation: &store.OperationUpdate{Key: key, Status: status}, ExpectVersion: version}
		if status == types.OpCompleted {
			sum += amount
			commit.NewState = json.RawMessage(fmt.Sprintf(`{"refunded_paise":%d,"keyed_paise":0}`, sum))
		}
		if err := st.Commit(ctx, commit); err != nil {
			t.Fatal(err)
		}
		version++
	}
	if h.wrongState {
		if err := st.Commit(ctx, &store.Commit{Execution: &types.Execution{RunID: "r", CallID: "tamper"},
			NewState: json.RawMessage(`{"refunded_paise":1,"keyed_paise":0}`), ExpectVersion: version}); err != nil {
			t.Fatal(err)
		}
	}
	return Input{Calls: h.calls, Effects: h.effects, Store: st, Runs: []string{"r"}}
}

func TestCheckFindsEachBrokenPromise(t *testing.T) {
	made := map[string]int{"ORD-1": 1, "ORD-2": 1}
	tests := []struct {
		name  string
		h     history
		count func(*Report) int
		want  string
	}{
		{"a clean history", history{}, func(r *Report) int { return len(r.Violations) }, ""},
		{"a refund made twice", history{effects: map[string]int{"ORD-1": 2, "ORD-2": 1}}, func(r *Report) int { return r.Duplicates }, "refunded 2 times"},
		{"a refund the ledger does not know", history{skipLedger: "ORD-2"}, func(r *Report) int { return r.Lost }, "has no operation"},
		{"an answer with an effect and no row", history{skipRow: "ORD-1"}, func(r *Report) int { return r.MissingRows }, "has no execution row"},
		{"an operation unknown though made", history{unknownMade: "ORD-2"}, func(r *Report) int { return r.Unsettled }, "unknown after reconcile"},
		{"an operation left started", history{startedLeft: "ORD-1"}, func(r *Report) int { return r.Unsettled }, "still started"},
		{"a state that is not the sum", history{wrongState: true}, func(r *Report) int { return r.StateMismatches }, "state refunded_paise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			h.ops = []string{"ORD-1", "ORD-2"}
			if h.effects == nil {
				h.effects = made
			}
			r, err := Check(context.Background(), h.build(t))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(r.Violations) > 0 {
					t.Fatalf("a clean history broke promises: %v", r.Violations)
				}
				return
			}
			if tt.count(r) == 0 || !strings.Contains(strings.Join(r.Violations, "\n"), tt.want) {
				t.Fatalf("want a violation saying %q, got %v", tt.want, r.Violations)
			}
		})
	}
}

func TestCheckAnswers(t *testing.T) {
	ok := func(id string) *Call {
		return &Call{ID: id, Tool: ToolRead, Status: http.StatusOK, Took: time.Second,
			Result: types.Result{OK: true, Meta: types.Meta{CallID: id, SideEffect: types.SideEffectNone}}}
	}
	late := ok("late")
	late.Took = Budgets[ToolRead] + Slack + time.Millisecond
	cut := ok("cut")
	cut.Err = "answer cut: unexpected EOF"
	internal := ok("internal")
	internal.Result = types.Result{Error: &types.Error{Code: types.CodeInternalError, Message: "boom"}, Meta: types.Meta{CallID: "internal"}}
	r := &Report{Codes: map[types.Code]int{}}
	r.checkAnswers([]*Call{ok("fine"), late, cut, internal})
	if r.OverBudget != 1 || r.BadAnswers != 2 || r.Answered != 3 || r.WorstOver <= Slack {
		t.Fatalf("over budget %d, bad %d, answered %d, worst over %s; want 1, 2, 3, past %s: %v",
			r.OverBudget, r.BadAnswers, r.Answered, r.WorstOver, Slack, r.Violations)
	}
}
