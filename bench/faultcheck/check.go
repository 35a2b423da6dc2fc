package faultcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Report is what the history check found. A run passes when Violations
// is empty.
type Report struct {
	// Calls sent, answered (an envelope of their own), of each code.
	Calls, Answered int
	Codes           map[types.Code]int
	// Tools counts the answers of each tool, by code.
	Tools map[string]map[types.Code]int
	// Effects: orders the provider refunded; Duplicates: orders refunded
	// more than once.
	Effects, Duplicates int
	// LedgerOps: operations in the ledger; Lost: refunded orders with no
	// operation in the ledger, or with one completed but never made.
	LedgerOps, Lost int
	// MissingRows: answers with an effect (committed or unknown) with no
	// execution row, or a row whose code differs from the answer's.
	MissingRows int
	// Unsettled: operations still started, or unknown although the
	// provider made them, after reconcile. UnknownUnmade: unknown
	// operations the provider never made (nothing to settle).
	Unsettled, UnknownUnmade int
	// BadAnswers: calls with no envelope of their own (no answer, a cut
	// answer, HTTP 500) or answered internal_error.
	BadAnswers int
	// OverBudget: answers that came later than their tool's budget plus
	// Slack; WorstOver the latest of all answers past its budget (0 when
	// none was past it).
	OverBudget int
	WorstOver  time.Duration
	// StateMismatches: runs whose state is not the sum of their effects,
	// or whose replay does not match.
	StateMismatches int
	// Violations says what broke, at most maxViolations of them.
	Violations []string
}

const maxViolations = 20

func (r *Report) violate(format string, args ...any) {
	if len(r.Violations) < maxViolations {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// Input is the history to check.
type Input struct {
	Calls []*Call
	// Effects maps each order the provider refunded to its refunds.
	Effects map[string]int
	// Store is the server's store, opened by the checker.
	Store store.Store
	// Runs are the runs the calls went to.
	Runs []string
	// Replay says whether replaying a run's log rebuilds its state.
	Replay func(ctx context.Context, run string) (bool, error)
}

// Check checks a finished history (after reconcile): see Report.
func Check(ctx context.Context, in Input) (*Report, error) {
	r := &Report{Codes: map[types.Code]int{}, Tools: map[string]map[types.Code]int{}}
	r.checkAnswers(in.Calls)
	ledger, err := r.checkLedger(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := r.checkRows(ctx, in); err != nil {
		return nil, err
	}
	if err := r.checkState(ctx, in, ledger); err != nil {
		return nil, err
	}
	return r, nil
}

// checkAnswers counts the answers and checks their codes and times.
func (r *Report) checkAnswers(calls []*Call) {
	for _, c := range calls {
		r.Calls++
		if !c.Answered() {
			r.BadAnswers++
			r.violate("call %s (%s %s) at %s: %s", c.ID, c.Tool, c.Order, c.Sent.Format("15:04:05.000"), c.Err)
			continue
		}
		r.Answered++
		r.Codes[c.Code()]++
		if r.Tools != nil {
			if r.Tools[c.Tool] == nil {
				r.Tools[c.Tool] = map[types.Code]int{}
			}
			r.Tools[c.Tool][c.Code()]++
		}
		if c.Code() == types.CodeInternalError {
			r.BadAnswers++
			r.violate("call %s (%s %s): internal_error: %s", c.ID, c.Tool, c.Order, c.Result.Error.Message)
		}
		if c.Status == http.StatusServiceUnavailable && c.Result.Meta.SideEffect != types.SideEffectNone {
			r.BadAnswers++
			r.violate("call %s: store_unavailable with side_effect %q", c.ID, c.Result.Meta.SideEffect)
		}
		over := c.Took - Budgets[c.Tool]
		r.WorstOver = max(r.WorstOver, over)
		if over > Slack {
			r.OverBudget++
			r.violate("call %s (%s) answered after %s, budget %s + %s", c.ID, c.Tool, c.Took.Round(time.Millisecond), Budgets[c.Tool], Slack)
		}
	}
}

// checkLedger compares the provider's effects with the ledger; it returns
// the ledger by order.
func (r *Report) checkLedger(ctx context.Context, in Input) (map[string]types.Operation, error) {
	ledger := map[string]types.Operation{}
	for _, status := range []types.OpStatus{types.OpStarted, types.OpUnknown, types.OpCompleted} {
		ops, err := in.Store.ListOperations(ctx, status, 1<<30)
		if err != nil {
			return nil, fmt.Errorf("faultcheck: list %s operations: %w", status, err)
		}
		for _, op := range ops {
			var args struct {
				OrderID string `json:"order_id"`
			}
			if err := json.Unmarshal(op.Args, &args); err != nil || args.OrderID == "" {
				return nil, fmt.Errorf("faultcheck: operation %s: args %s: %v", op.Key, op.Args, err)
			}
			if prev, dup := ledger[args.OrderID]; dup {
				r.Duplicates++
				r.violate("two operations of %s: %s and %s", args.OrderID, prev.Key, op.Key)
			}
			ledger[args.OrderID] = op
		}
	}
	r.LedgerOps = len(ledger)
	for order, n := range in.Effects {
		r.Effects++
		if n > 1 {
			r.Duplicates++
			r.violate("%s was refunded %d times", order, n)
		}
		if _, ok := ledger[order]; !ok {
			r.Lost++
			r.violate("%s was refunded, and the ledger has no operation of it; its calls: %s", order, callsOf(in.Calls, order))
		}
	}
	for order, op := range ledger {
		made := in.Effects[order] > 0
		switch {
		case op.Status == types.OpStarted:
			r.Unsettled++
			r.violate("operation %s (%s) still started after reconcile; its calls: %s", op.Key, order, callsOf(in.Calls, order))
		case op.Status == types.OpUnknown && made:
			r.Unsettled++
			r.violate("operation %s (%s) unknown after reconcile, but the provider made it; its calls: %s", op.Key, order, callsOf(in.Calls, order))
		case op.Status == types.OpUnknown:
			r.UnknownUnmade++
		case op.Status == types.OpCompleted && !made:
			r.Lost++
			r.violate("operation %s (%s) completed, but the provider never made it", op.Key, order)
		}
	}
	return ledger, nil
}

// checkRows checks that every answer with an effect has its execution
// row, and that every row of an answered call has the answer's code.
func (r *Report) checkRows(ctx context.Context, in Input) error {
	rows := map[string]types.Execution{}
	for _, run := range in.Runs {
		list, err := in.Store.ListExecutions(ctx, types.ExecutionFilter{RunID: run, Limit: 1 << 30})
		if err != nil {
			return fmt.Errorf("faultcheck: rows of %s: %w", run, err)
		}
		for _, row := range list {
			if _, dup := rows[row.CallID]; dup && !strings.HasPrefix(row.CallID, "reconcile-") {
				r.MissingRows++
				r.violate("two execution rows of call %s", row.CallID)
			}
			rows[row.CallID] = row
		}
	}
	for _, c := range in.Calls {
		if !c.Answered() {
			continue
		}
		row, ok := rows[c.ID]
		effect := c.Result.Meta.SideEffect == types.SideEffectCommitted || c.Result.Meta.SideEffect == types.SideEffectUnknown
		switch {
		case !ok && effect:
			r.MissingRows++
			r.violate("call %s (%s %s) answered %s (side_effect %s) has no execution row", c.ID, c.Tool, c.Order, c.Code(), c.Result.Meta.SideEffect)
		case ok && row.Code != c.Code() && !(c.Code() == types.CodeUnknownOutcome && row.SideEffect == types.SideEffectCommitted):
			// (An unknown_outcome whose commit was written after all, its
			// answer lost with the store's connection: the row is right,
			// and the answer said the effect may have happened.)
			r.MissingRows++
			r.violate("call %s answered %s, its row says %s", c.ID, c.Code(), row.Code)
		}
	}
	return nil
}

// checkState checks that each run's state sums the refunds of its
// completed operations, and that replaying its log rebuilds it.
func (r *Report) checkState(ctx context.Context, in Input, ledger map[string]types.Operation) error {
	want := wantedState(in.Calls, ledger)
	for _, run := range in.Runs {
		got, err := in.Store.GetRun(ctx, run)
		if err != nil {
			return fmt.Errorf("faultcheck: run %s: %w", run, err)
		}
		dec := json.NewDecoder(bytes.NewReader(got.State))
		dec.UseNumber()
		var state map[string]json.Number
		if err := dec.Decode(&state); err != nil {
			return fmt.Errorf("faultcheck: run %s state %s: %w", run, got.State, err)
		}
		for _, key := range []string{"refunded_paise", "keyed_paise", "mcp_paise"} {
			w := want[got.ID][key]
			if got.ID != run {
				w += want[run][key]
			}
			got := state[key].String()
			if got == "" {
				got = "0" // a run made before the key was
			}
			if got != fmt.Sprint(w) {
				r.StateMismatches++
				r.violate("run %s: state %s = %s, its completed operations sum %d", run, key, got, w)
			}
		}
		if in.Replay == nil {
			continue
		}
		ok, err := in.Replay(ctx, run)
		if err != nil {
			return err
		}
		if !ok {
			r.StateMismatches++
			r.violate("run %s: replaying its log does not rebuild its state", run)
		}
	}
	return nil
}

// wantedState is, by run and by state key, the sum of the refunds of the
// run's completed operations (calls gives each order's amount).
func wantedState(calls []*Call, ledger map[string]types.Operation) map[string]map[string]int64 {
	want := map[string]map[string]int64{}
	amounts := map[string]int64{}
	for _, c := range calls {
		if c.Tool != ToolRead {
			amounts[c.Order] = c.Amount
		}
	}
	for order, op := range ledger {
		if op.Status != types.OpCompleted {
			continue
		}
		key := "refunded_paise"
		switch op.Tool {
		case ToolKeyed:
			key = "keyed_paise"
		case ToolMCP:
			key = "mcp_paise"
		}
		if want[op.RunID] == nil {
			want[op.RunID] = map[string]int64{}
		}
		want[op.RunID][key] += amounts[order]
	}
	return want
}

// callsOf describes the calls of one order, for a violation's message.
func callsOf(calls []*Call, order string) string {
	var parts []string
	for _, c := range calls {
		if c.Order == order && c.Tool != ToolRead {
			parts = append(parts, fmt.Sprintf("%s %s at %s: %s (side_effect %s, after %s) %s", c.ID, c.Tool,
				c.Sent.Format("15:04:05.000"), c.Code(), c.Result.Meta.SideEffect, c.Took.Round(time.Millisecond), c.Err))
		}
	}
	return strings.Join(parts, "; ")
}
