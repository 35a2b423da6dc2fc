// Package whatif re-judges recorded calls under another configuration:
// validation, permission, rules and quotas, offline. Nothing is executed and no
// dependency is called, so the ownership lookup (which needs one) is not
// re-run; a call refused by ownership keeps that verdict.
package whatif

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
	"github.com/toolgate/toolgate/validate"
)

// Verdict is how a call was or would be judged.
type Verdict struct {
	// Allowed: the call passed validation, permission and rules.
	Allowed bool `json:"allowed"`
	// Code is the refusal code when not allowed ("" when allowed).
	Code types.Code `json:"code,omitempty"`
	// Rule names the deciding rule, when a rule decided ("rules[0]: args.x > 5").
	Rule string `json:"rule,omitempty"`
	// Message is the refusal's message.
	Message string `json:"message,omitempty"`
}

// String is "allowed" or "refused (code)".
func (v Verdict) String() string {
	if v.Allowed {
		return "allowed"
	}
	return "refused (" + string(v.Code) + ")"
}

// Change is one recorded call whose verdict differs under the new config.
type Change struct {
	RunID  string          `json:"run_id"`
	Step   int64           `json:"step"`
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	At     time.Time       `json:"at"`
	Was    Verdict         `json:"was"`
	Now    Verdict         `json:"now"`
}

// Report is the outcome of a what-if pass.
type Report struct {
	// Judged counts the recorded calls judged again.
	Judged int `json:"judged"`
	// Changes are the calls whose verdict changed, in run and step order.
	Changes []Change `json:"changes"`
}

// Scope selects the recorded calls: one run, or every run since a time.
type Scope struct {
	RunID string
	Since time.Time
	// Limit caps the rows read (default 100,000).
	Limit int
}

// Judge re-judges the recorded calls of scope under cfg.
func Judge(ctx context.Context, st store.Store, cfg *config.Config, scope Scope) (*Report, error) {
	v, err := validate.Compile(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("the new config has problems: %w", err)
	}
	limit := scope.Limit
	if limit <= 0 {
		limit = 100000
	}
	rows, err := st.ListExecutions(ctx, types.ExecutionFilter{RunID: scope.RunID, Since: scope.Since, Limit: limit, Ascending: true})
	if err != nil {
		return nil, err
	}
	byRun := map[string][]types.Execution{}
	var order []string
	for _, r := range rows {
		if _, ok := byRun[r.RunID]; !ok {
			order = append(order, r.RunID)
		}
		byRun[r.RunID] = append(byRun[r.RunID], r)
	}
	rep := &Report{Changes: []Change{}}
	var all []*judged
	for _, runID := range order {
		run, err := st.GetRun(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", runID, err)
		}
		items, err := judgeRun(v, run, byRun[runID])
		if err != nil {
			return nil, err
		}
		rep.Judged += len(items)
		all = append(all, items...)
	}
	// Quotas span runs: they are judged over every run's calls at once.
	judgeQuotas(all)
	for _, j := range all {
		if j.now.Allowed != j.was.Allowed {
			r := j.row
			rep.Changes = append(rep.Changes, Change{RunID: j.run.ID, Step: r.Step, CallID: r.CallID, Tool: r.Tool,
				Args: r.Args, At: r.FinishedAt, Was: j.was, Now: j.now})
		}
	}
	return rep, nil
}

// judged is one recorded call judged again.
type judged struct {
	run      *types.Run
	row      types.Execution
	was, now Verdict
	// checked is the call as the new config checks it (nil when it did
	// not get that far).
	checked *validate.Checked
}

// judgeRun replays the run's state patches in commit order, so each call is
// judged against the state it saw.
func judgeRun(v *validate.Validator, run *types.Run, rows []types.Execution) ([]*judged, error) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Version < rows[j].Version })
	st := run.InitialState
	var out []*judged
	for _, r := range rows {
		was := recorded(r)
		if r.Replayed || r.Code == types.CodeStepBudgetExhausted || r.Code == types.CodeRunBusy {
			// A replay was judged with its original; a budget refusal or a
			// wait for the run's state-writer slot is not the config's.
		} else {
			checked, refusal := v.Check(&validate.Input{Tool: r.Tool, Args: r.Args, Principal: &run.Principal,
				State: st, RunID: run.ID, CallID: r.CallID, Key: run.Owner})
			now := Verdict{Allowed: true}
			switch {
			case refusal != nil:
				now = Verdict{Code: refusal.Code, Message: refusal.Message}
				if refusal.Rule >= 0 {
					if c, ok := v.Tool(r.Tool); ok && refusal.Rule < len(c.Rules) {
						now.Rule = fmt.Sprintf("rules[%d]: %s", refusal.Rule, c.Rules[refusal.Rule].Deny.Source())
					}
				}
			case was.Code == types.CodeNotOwner:
				now = was // ownership is not re-checked offline
			}
			out = append(out, &judged{run: run, row: r, was: was, now: now, checked: checked})
		}
		next, err := state.ApplyRaw(st, r.StatePatch)
		if err != nil {
			return nil, err
		}
		st = next
	}
	return out, nil
}

// judgeQuotas judges the new config's quotas over the calls it allows, in
// the order they were admitted, each reservation sliding out of its
// window as it would have. A call the dependency refused or that was never
// delivered released its use; a call that was refused before (and so
// never ran) is assumed to have used it.
func judgeQuotas(all []*judged) {
	sorted := append([]*judged(nil), all...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].row.StartedAt.Before(sorted[j].row.StartedAt) })
	type use struct {
		at     time.Time
		amount int64
	}
	windows := map[[2]string][]use{}
	for _, j := range sorted {
		if !j.now.Allowed || j.checked == nil || j.checked.Tool.Effect != types.EffectWrite || len(j.checked.Tool.Quotas) == 0 {
			continue
		}
		// A quota that cannot be evaluated refused the call in Check.
		at := j.row.StartedAt
		for _, u := range j.checked.Quotas {
			var used int64
			for _, w := range windows[[2]string{u.Quota.Name, u.Key}] {
				if w.at.After(at.Add(-u.Quota.Window)) {
					used = store.AddSaturating(used, w.amount)
				}
			}
			if !store.Fits(used, u.Amount, u.Quota.Limit) {
				j.now = Verdict{Code: types.CodeQuotaExceeded, Rule: "quota " + u.Quota.Name,
					Message: fmt.Sprintf("Quota %s for %s: %d of %d used in the last %s; this call needs %d.",
						u.Quota.Name, u.Key, used, u.Quota.Limit, u.Quota.Window, u.Amount)}
				break
			}
		}
		if !j.now.Allowed || released(j) {
			continue
		}
		for _, u := range j.checked.Quotas {
			k := [2]string{u.Quota.Name, u.Key}
			windows[k] = append(windows[k], use{at: at, amount: u.Amount})
		}
	}
}

// released reports whether the recorded call gave its quota use back: it
// ran and provably did nothing.
func released(j *judged) bool {
	if !j.was.Allowed {
		return false
	}
	return j.row.Code != types.CodeOK && j.row.SideEffect == types.SideEffectNone
}

// recorded is the verdict a row records: a call refused before it was
// admitted carries a validation, permission or rule code.
func recorded(r types.Execution) Verdict {
	switch r.Code {
	case types.CodeOK, types.CodeConnectFailed, types.CodeConnectTimeout, types.CodeTimeoutUnknownOutcome,
		types.CodeTimeout, types.CodeUnknownOutcome, types.CodeRateLimited, types.CodeUpstreamError,
		types.CodeRejected, types.CodeCircuitOpen, types.CodeDuplicateInFlight, types.CodeIdempotencyConflict,
		types.CodeStepBudgetExhausted, types.CodeInternalError:
		return Verdict{Allowed: true}
	}
	var res types.Result
	msg := ""
	if json.Unmarshal(r.Result, &res) == nil && res.Error != nil {
		msg = res.Error.Message
	}
	return Verdict{Code: r.Code, Message: msg}
}
