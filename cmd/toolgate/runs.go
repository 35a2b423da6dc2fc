package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/server"
)

func runRuns(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "runs", "show RUN [--config FILE] [--json] [--full]",
		"toolgate runs show run_8c1f --config toolgate.yaml\ntoolgate runs show run_8c1f --json")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
	asJSON := fs.Bool("json", false, "print the run document as JSON (as GET /v1/runs/RUN answers it)")
	full := fs.Bool("full", false, "print whole observations, not their first 240 characters")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "show" {
		return fmt.Errorf("%w: want: runs show RUN", errUsage)
	}
	gw, closeStore, err := openReadOnly(ctx, *path)
	if err != nil {
		return err
	}
	defer closeStore()
	run, err := gw.GetRun(ctx, pos[1])
	if errors.Is(err, toolgate.ErrUnknownRun) {
		return fmt.Errorf("no run %q in the store %s", pos[1], gw.Config().Store)
	}
	if err != nil {
		return err
	}
	rows, err := gw.History(ctx, run.ID)
	if err != nil {
		return err
	}
	doc := server.NewRunDocument(run, rows)
	if *asJSON {
		return printJSON(e.stdout, doc)
	}
	printTimeline(e.stdout, doc, *full)
	return nil
}

// printTimeline prints a run document for people:
//
//	Run r1 for cust_42 (permissions: refunds:write; limits: max_refund_paise=500000)
//	Step 2 of 10; created 2026-11-30 11:04:02; last call 11:04:12
//	State: {"refunded_paise":425000}
//
//	#1  11:04:02.120  get_order  ok  (nothing changed, 1 attempt, 3 ms, call toolu_1)
//	    args  {"order_id":"ORD-4471"}
//	    told  Order ORD-4471 ...
func printTimeline(w io.Writer, doc *server.RunDocument, full bool) {
	p := doc.Principal
	var who []string
	if len(p.Permissions) > 0 {
		who = append(who, "permissions: "+strings.Join(p.Permissions, ", "))
	}
	if len(p.Limits) > 0 {
		var ls []string
		for k, v := range p.Limits {
			ls = append(ls, k+"="+v.String())
		}
		sort.Strings(ls)
		who = append(who, "limits: "+strings.Join(ls, ", "))
	}
	fmt.Fprintf(w, "Run %s for %s", doc.RunID, p.ID)
	if len(who) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(who, "; "))
	}
	fmt.Fprintln(w)
	steps := fmt.Sprintf("Step %d", doc.Step)
	if doc.MaxSteps > 0 {
		steps += fmt.Sprintf(" of %d", doc.MaxSteps)
	}
	fmt.Fprintf(w, "%s; created %s; last change %s\n", steps,
		doc.CreatedAt.Local().Format(time.DateTime), doc.UpdatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "State: %s\n", doc.State)
	if len(doc.History) == 0 {
		fmt.Fprintln(w, "\nNo calls yet.")
		return
	}
	for _, h := range doc.History {
		var facts []string
		facts = append(facts, map[string]string{"none": "nothing changed", "committed": "done", "unknown": "MAY have happened"}[string(h.SideEffect)])
		if h.Replayed {
			facts = append(facts, "replayed")
		}
		if h.Verified {
			facts = append(facts, "verified")
		}
		attempts := fmt.Sprintf("%d attempts", h.Attempts)
		if h.Attempts == 1 {
			attempts = "1 attempt"
		}
		facts = append(facts, attempts, fmt.Sprintf("%.0f ms", h.LatencyMS), "call "+h.CallID)
		fmt.Fprintf(w, "\n#%d  %s  %s  %s  (%s)\n", h.Step, h.StartedAt.Local().Format("15:04:05.000"), h.Tool, h.Code, strings.Join(facts, ", "))
		fmt.Fprintf(w, "    args   %s\n", h.Args)
		told := h.Observation
		if !full {
			told = shorten(told, 240)
		}
		fmt.Fprintf(w, "    told   %s\n", strings.ReplaceAll(told, "\n", "\n           "))
		if len(h.StatePatch) > 0 && string(h.StatePatch) != "null" {
			fmt.Fprintf(w, "    state  %s\n", h.StatePatch)
		}
	}
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "… (--full shows all)"
}
