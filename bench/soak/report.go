package soak

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/types"
)

// Report is the figures of one soak.
type Report struct {
	Calls         int          `json:"calls"`
	Operations    int          `json:"operations"`
	Callers       int          `json:"callers"`
	Runs          int          `json:"runs"`
	ReadTimeoutMS float64      `json:"read_timeout_ms"`
	Faults        FaultFigures `json:"faults"`
	Seed          uint64       `json:"seed"`
	// Toolgate is the soak through toolgate.
	Toolgate *ToolgateFigures `json:"toolgate"`
	// Textbook is the same calls through a textbook retry loop (nil when
	// not run).
	Textbook *TextbookFigures `json:"textbook,omitempty"`
	// Failures lists every violated check; empty when the soak passed.
	Failures []string `json:"failures"`
}

// FaultFigures are Faults as figures.
type FaultFigures struct {
	Slow        float64 `json:"slow"`
	SlowDelayMS float64 `json:"slow_delay_ms"`
	Unavailable float64 `json:"unavailable"`
	Reset       float64 `json:"reset"`
}

func faultsOf(f Faults) FaultFigures {
	return FaultFigures{Slow: f.Slow, SlowDelayMS: ms(f.SlowDelay), Unavailable: f.Unavailable, Reset: f.Reset}
}

// OK says every check passed.
func (r *Report) OK() bool { return len(r.Failures) == 0 }

// ToolgateFigures are the soak's counts through toolgate.
type ToolgateFigures struct {
	// CallsSent is the load phase's calls; FinalPassCalls the final pass's.
	CallsSent      int `json:"calls_sent"`
	FinalPassCalls int `json:"final_pass_calls"`
	FinalRounds    int `json:"final_rounds"`
	// CallsAnswered counts HTTP 200 envelopes (both phases).
	CallsAnswered int `json:"calls_answered"`
	// HTTPErrors counts calls without an HTTP 200 envelope of their own.
	HTTPErrors int `json:"http_errors"`
	// Codes and FinalCodes count the answers' codes in each phase.
	Codes      map[string]int `json:"codes"`
	FinalCodes map[string]int `json:"final_codes"`
	Replayed   int            `json:"replayed"`
	Verified   int            `json:"verified"`
	// UnconfirmedAfterLoad counts operations no load-phase call answered ok.
	UnconfirmedAfterLoad int `json:"unconfirmed_after_load"`

	// Effects counts refunds made; OperationsWithEffect the operations
	// with at least one.
	Effects              int `json:"effects"`
	OperationsWithEffect int `json:"operations_with_effect"`
	// Duplicates counts effects beyond an operation's first (must be 0).
	Duplicates          int `json:"duplicates"`
	DuplicateOperations int `json:"duplicate_operations"`

	// RowsRecorded counts execution rows in the SQLite file.
	RowsRecorded int `json:"rows_recorded"`
	// LostRows counts answered calls without their row, or with a row of
	// another code; ExtraRows rows of no answered call (both must be 0).
	LostRows  int `json:"lost_rows"`
	ExtraRows int `json:"extra_rows"`

	// Ledger counts the operation records by status.
	Ledger map[string]int `json:"ledger"`
	// UnsettledWithEffect counts operations whose refund was made but
	// that are not completed in the ledger (must be 0).
	UnsettledWithEffect int `json:"unsettled_with_effect"`
	// UnknownNoEffect counts operations left unknown whose refund the
	// provider never made: every request of theirs that reached the
	// provider was declined (503) or reset before processing (their fates
	// are counted in UnknownNoEffectFates), or none reached it, and no
	// request was in progress when counted. Allowed: toolgate cannot know,
	// and never sends them again without proof.
	UnknownNoEffect      int          `json:"unknown_no_effect"`
	UnknownNoEffectFates map[Fate]int `json:"unknown_no_effect_fates"`
	// CompletedWithoutEffect counts operations completed in the ledger
	// that the provider never made (must be 0).
	CompletedWithoutEffect int `json:"completed_without_effect"`
	// EffectWithoutRecord counts refunds of operations the ledger has no
	// record of (must be 0).
	EffectWithoutRecord int `json:"effect_without_record"`
	// LeftStarted counts operations still started after the server exited
	// (must be 0).
	LeftStarted int `json:"left_started"`
	// NeverDone counts operations with neither an effect nor a ledger
	// record after the final pass (must be 0: the calm provider should
	// have made them).
	NeverDone int `json:"never_done"`
	// StateMismatches counts runs whose state is not the sum of their
	// operations' refunds; ReplayMismatches runs whose replayed log does
	// not rebuild their state (both must be 0).
	StateMismatches  int `json:"state_mismatches"`
	ReplayMismatches int `json:"replay_mismatches"`

	// ServerExit is "ok" for a graceful exit with status 0.
	ServerExit       string `json:"server_exit"`
	ServerErrorLines int    `json:"server_error_lines"`
	Races            int    `json:"races"`
	Panics           int    `json:"panics"`
	ServerStderr     string `json:"server_stderr,omitempty"`

	Provider    Totals  `json:"provider"`
	LoadSeconds float64 `json:"load_seconds"`
	Seconds     float64 `json:"seconds"`

	details []string
}

// TextbookFigures are the soak's counts through a textbook retry loop: no
// idempotency key, retry on timeout, 503 and reset.
type TextbookFigures struct {
	Calls     int `json:"calls"`
	Attempts  int `json:"attempts"`
	Succeeded int `json:"succeeded"`
	GaveUp    int `json:"gave_up"`
	Effects   int `json:"effects"`
	// Duplicates counts effects beyond an operation's first; of them,
	// DuplicatesByRetry were made by a retry within one call, and
	// DuplicatesByRepeat by a repeated call of an operation already made.
	Duplicates          int     `json:"duplicates"`
	DuplicatesByRetry   int     `json:"duplicates_by_retry"`
	DuplicatesByRepeat  int     `json:"duplicates_by_repeat"`
	DuplicateOperations int     `json:"duplicate_operations"`
	Provider            Totals  `json:"provider"`
	Seconds             float64 `json:"seconds"`
}

// count adds one answer to the figures.
func (f *ToolgateFigures) count(a answer, codes map[string]int) {
	if !a.answered() {
		f.HTTPErrors++
		codes["(no answer)"]++
		f.detail("call %s of %s: no envelope: status %d, %v", a.callID, a.op.order, a.status, a.err)
		return
	}
	f.CallsAnswered++
	codes[string(a.env.Code())]++
	if a.env.Meta.Replayed {
		f.Replayed++
	}
	if a.env.Meta.Verified {
		f.Verified++
	}
}

func (f *ToolgateFigures) detail(format string, args ...any) {
	if len(f.details) < maxDetails {
		f.details = append(f.details, fmt.Sprintf(format, args...))
	}
}

// maxDetails bounds the examples of violations kept for the report.
const maxDetails = 20

// settle checks the provider's effects, the answers, the server's rows
// and ledger, and the runs' state against each other.
func (f *ToolgateFigures) settle(ops []*operation, orders map[string]OrderLog, db *database, sent []answer, runs map[string]runState) {
	// Effects, per operation.
	perRun := map[string]*refundsWanted{}
	for _, op := range ops {
		o := orders[op.order]
		led, inLedger := db.ledger[op.order]
		f.Effects += o.Effects
		if o.Effects > 0 {
			f.OperationsWithEffect++
			w := perRun[op.run]
			if w == nil {
				w = &refundsWanted{}
				perRun[op.run] = w
			}
			w.paise += o.Amounts[0]
			w.refunds++
		}
		if o.Effects > 1 {
			f.Duplicates += o.Effects - 1
			f.DuplicateOperations++
			f.detail("duplicate: %s (%s) has %d refunds; fates %v", op.order, op.tool, o.Effects, o.Fates)
		}
		if inLedger {
			f.settleLedger(op, o, led)
		} else if o.Effects > 0 {
			f.EffectWithoutRecord++
			f.detail("effect without a ledger record: %s (%s); fates %v", op.order, op.tool, o.Fates)
		} else {
			f.NeverDone++
			f.detail("never done: %s (%s); fates %v", op.order, op.tool, o.Fates)
		}
	}
	f.Ledger = map[string]int{}
	for s, n := range db.byStatus {
		f.Ledger[string(s)] = n
	}

	f.settleRows(db, sent)
	f.settleState(runs, perRun)
}

// settleLedger checks one operation's ledger record, led, against the
// provider's log of its order, o: a record left started, completed
// without an effect, or unknown although the refund was made (or although
// a request met a fate other than a decline or a reset before processing).
func (f *ToolgateFigures) settleLedger(op *operation, o OrderLog, led types.Operation) {
	switch {
	case led.Status == types.OpStarted:
		f.LeftStarted++
		f.detail("left started: %s (%s), %d effect(s)", op.order, op.tool, o.Effects)
	case led.Status == types.OpCompleted && o.Effects == 0:
		f.CompletedWithoutEffect++
		f.detail("completed without effect: %s (%s); fates %v", op.order, op.tool, o.Fates)
	case led.Status == types.OpUnknown && o.Effects > 0:
		f.UnsettledWithEffect++
		f.detail("unknown with effect: %s (%s); fates %v", op.order, op.tool, o.Fates)
	case led.Status == types.OpUnknown:
		f.UnknownNoEffect++
		if f.UnknownNoEffectFates == nil {
			f.UnknownNoEffectFates = map[Fate]int{}
		}
		for fate, n := range o.Fates {
			f.UnknownNoEffectFates[fate] += n
			if fate != FateResetBefore && fate != FateUnavailable {
				// Only a decline or a reset before processing leaves no
				// effect; anything else contradicts "never made".
				f.UnsettledWithEffect++
				f.detail("unknown, no effect, but a request met %s: %s (%s); fates %v", fate, op.order, op.tool, o.Fates)
			}
		}
	}
}

// refundsWanted is what a run's state should sum: the refunds the provider
// made for its operations, once each.
type refundsWanted struct{ paise, refunds int64 }

// settleRows checks the rows: each answered call has its row with the same
// code; no other row.
func (f *ToolgateFigures) settleRows(db *database, sent []answer) {
	f.RowsRecorded = len(db.rows)
	rows := make(map[string]types.Code, len(db.rows))
	for _, r := range db.rows {
		rows[r.CallID] = r.Code
	}
	for _, a := range sent {
		if !a.answered() {
			continue
		}
		code, ok := rows[a.callID]
		switch {
		case !ok:
			f.LostRows++
			f.detail("lost row: call %s answered %s", a.callID, a.env.Code())
		case code != a.env.Code():
			f.LostRows++
			f.detail("row of call %s says %s, its answer %s", a.callID, code, a.env.Code())
		}
		delete(rows, a.callID)
	}
	f.ExtraRows = len(rows)
	for id, code := range rows {
		f.detail("row of no answered call: %s (%s)", id, code)
	}
}

// settleState checks the state: each run sums its operations' refunds,
// once each.
func (f *ToolgateFigures) settleState(runs map[string]runState, perRun map[string]*refundsWanted) {
	for id, got := range runs {
		w := perRun[id]
		if w == nil {
			w = &refundsWanted{}
		}
		if got.RefundedPaise != w.paise || got.Refunds != w.refunds {
			f.StateMismatches++
			f.detail("run %s state: %d refunds, %d paise; the provider made %d, %d paise", id, got.Refunds, got.RefundedPaise, w.refunds, w.paise)
		}
		if !got.Matches {
			f.ReplayMismatches++
			f.detail("run %s: replaying the log does not rebuild the state", id)
		}
	}
}

// check lists the violated checks.
func (r *Report) check() {
	t := r.Toolgate
	fail := func(cond bool, format string, args ...any) {
		if cond {
			r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
		}
	}
	fail(t.Duplicates > 0, "%d duplicate effect(s) in %d operation(s)", t.Duplicates, t.DuplicateOperations)
	fail(t.HTTPErrors > 0, "%d call(s) without an HTTP 200 envelope", t.HTTPErrors)
	fail(t.LostRows > 0, "%d answered call(s) without their execution row", t.LostRows)
	fail(t.ExtraRows > 0, "%d execution row(s) of no answered call", t.ExtraRows)
	fail(t.UnsettledWithEffect > 0, "%d operation(s) whose effect happened left unsettled", t.UnsettledWithEffect)
	fail(t.CompletedWithoutEffect > 0, "%d operation(s) completed that the provider never made", t.CompletedWithoutEffect)
	fail(t.EffectWithoutRecord > 0, "%d operation(s) made with no ledger record", t.EffectWithoutRecord)
	fail(t.LeftStarted > 0, "%d operation(s) left started", t.LeftStarted)
	fail(t.NeverDone > 0, "%d operation(s) never done after the final pass", t.NeverDone)
	fail(t.StateMismatches > 0, "%d run(s) whose state is not the sum of their refunds", t.StateMismatches)
	fail(t.ReplayMismatches > 0, "%d run(s) whose replay does not match", t.ReplayMismatches)
	fail(t.ServerExit != "ok", "the server's exit: %s", t.ServerExit)
	fail(t.ServerErrorLines > 0, "the server logged %d error line(s)", t.ServerErrorLines)
	fail(t.Races > 0, "the server reported %d data race(s)", t.Races)
	fail(t.Panics > 0, "the server printed %d panic(s)", t.Panics)
	if len(r.Failures) > 0 {
		r.Failures = append(r.Failures, t.details...)
		if t.ServerStderr != "" {
			r.Failures = append(r.Failures, "server stderr (last lines):\n"+t.ServerStderr)
		}
	}
}

// Print writes the soak's figures as a table.
func (r *Report) Print(w io.Writer) {
	t := r.Toolgate
	fmt.Fprintf(w, "soak: %d calls of %d operations from %d callers over %d runs; read timeout %gms; provider: %.0f%% slow (%gms), %.0f%% 503, %.0f%% reset; seed %d\n",
		r.Calls, r.Operations, r.Callers, r.Runs, r.ReadTimeoutMS, 100*r.Faults.Slow, r.Faults.SlowDelayMS,
		100*r.Faults.Unavailable, 100*r.Faults.Reset, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tb := r.Textbook
	row := func(name string, v any, textbook any) {
		if tb == nil {
			fmt.Fprintf(tw, "  %s\t%v\n", name, v)
			return
		}
		fmt.Fprintf(tw, "  %s\t%v\t%v\n", name, v, textbook)
	}
	if tb != nil {
		fmt.Fprintf(tw, "  \tTOOLGATE\tTEXTBOOK RETRY LOOP\n")
	}
	row("operations", r.Operations, r.Operations)
	row("calls (load + final pass)", fmt.Sprintf("%d + %d", t.CallsSent, t.FinalPassCalls), tb.callsOrNil())
	row("effects at the provider", t.Effects, tb.get(func(x *TextbookFigures) any { return x.Effects }))
	row("duplicates (must be 0)", t.Duplicates, tb.get(func(x *TextbookFigures) any {
		return fmt.Sprintf("%d (%d by retry, %d by repeat) in %d operations", x.Duplicates, x.DuplicatesByRetry, x.DuplicatesByRepeat, x.DuplicateOperations)
	}))
	row("calls answered (HTTP 200 envelopes)", t.CallsAnswered, "")
	row("execution rows recorded", t.RowsRecorded, "")
	row("lost / extra rows (must be 0)", fmt.Sprintf("%d / %d", t.LostRows, t.ExtraRows), "")
	row("operations unconfirmed after load", t.UnconfirmedAfterLoad, "")
	row("ledger after final pass", fmtCounts(t.Ledger), "")
	row("unsettled with effect (must be 0)", t.UnsettledWithEffect, "")
	row("unknown, provider never made it", fmt.Sprintf("%d (their requests: %s)", t.UnknownNoEffect, fmtCounts(t.UnknownNoEffectFates)), "")
	row("completed without effect (must be 0)", t.CompletedWithoutEffect, "")
	row("state / replay mismatches (must be 0)", fmt.Sprintf("%d / %d", t.StateMismatches, t.ReplayMismatches), "")
	row("codes (load)", fmtCounts(t.Codes), "")
	row("codes (final pass)", fmtCounts(t.FinalCodes), "")
	row("provider requests", fmtCounts(t.Provider.ByFate), tb.get(func(x *TextbookFigures) any { return fmtCounts(x.Provider.ByFate) }))
	row("seconds", fmt.Sprintf("%.1f", t.Seconds), tb.get(func(x *TextbookFigures) any { return fmt.Sprintf("%.1f", x.Seconds) }))
	tw.Flush()
	if r.OK() {
		fmt.Fprintln(w, "soak: PASS")
		return
	}
	fmt.Fprintln(w, "soak: FAIL")
	for _, f := range r.Failures {
		fmt.Fprintln(w, "  "+f)
	}
}

func (tb *TextbookFigures) callsOrNil() any {
	if tb == nil {
		return nil
	}
	return fmt.Sprintf("%d (%d attempts, %d gave up)", tb.Calls, tb.Attempts, tb.GaveUp)
}

func (tb *TextbookFigures) get(f func(*TextbookFigures) any) any {
	if tb == nil {
		return nil
	}
	return f(tb)
}

// fmtCounts formats a map of counts in key order.
func fmtCounts[K ~string](m map[K]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
