package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/server"
)

func runRuns(ctx context.Context, e *env, args []string) error {
	// "list" is the verb unless it is the value of the flag before it.
	if i := slices.Index(args, "list"); i == 0 || i > 0 && (!strings.HasPrefix(args[i-1], "-") || strings.Contains(args[i-1], "=")) {
		return runRunsList(ctx, e, slices.Delete(slices.Clone(args), i, i+1))
	}
	fs := flags(e, "runs", "show RUN [--key NAME] [--config FILE] [--json] [--full] | list [flags]",
		"toolgate runs show p1 --config toolgate.yaml\ntoolgate runs show p1 --key support-bot --json\ntoolgate runs list --since 24h   (toolgate runs list --help: its flags)")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
	key := fs.String("key", "", "the auth.keys name whose run RUN is (default: the one key with a run of that id)")
	asJSON := fs.Bool("json", false, "print the run document as JSON (as GET /v1/runs/RUN answers it)")
	full := fs.Bool("full", false, "print whole observations, not their first 240 characters")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "show" {
		return fmt.Errorf("%w: want: runs show RUN, or runs list", errUsage)
	}
	gw, closeStore, err := openReadOnly(ctx, *path)
	if err != nil {
		return err
	}
	defer closeStore()
	run, err := findRun(ctx, gw.Store(), pos[1], *key)
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
	printRunHeader(w, doc)
	if len(doc.History) == 0 {
		fmt.Fprintln(w, "\nNo calls yet.")
		return
	}
	for _, h := range doc.History {
		printHistoryEntry(w, &h, full)
	}
}

// printRunHeader prints the run's first three lines: whose run it is, its
// steps and times, and its state.
func printRunHeader(w io.Writer, doc *server.RunDocument) {
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
}

// printHistoryEntry prints one call of the run: its step, time, tool,
// outcome and facts, then its arguments, what the model was told (cut
// unless full) and the state it changed.
func printHistoryEntry(w io.Writer, h *server.HistoryEntry, full bool) {
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

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "… (--full shows all)"
}
