package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/store"
)

// runRunsList is `toolgate runs list`: the runs of the config's store,
// newest first, with the filters of GET /v1/runs. The command line reads
// the store itself, so it sees every key's runs (--key narrows them).
func runRunsList(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "runs", "list [--key NAME] [--principal ID] [--tool NAME] [--outcome CODE] [--q TEXT] [--since 24h] [--limit N] [--json]",
		"toolgate runs list --config toolgate.yaml --since 24h\ntoolgate runs list --key support-bot --tool issue_refund --outcome timeout_unknown_outcome")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
	query := url.Values{}
	for name, help := range map[string]string{
		"key":       "only the runs of this auth.keys name",
		"principal": "only the runs acting for this principal id",
		"tool":      "only the runs with a call of this tool",
		"outcome":   "only the runs with a call that ended with this outcome code (with --tool: one call of that tool)",
		"q":         "only the runs whose id or principal id contains this text (any case)",
		"since":     "only the runs created since this RFC 3339 time, or this long ago (24h)",
		"limit":     "at most this many runs (1 to 1000; default 50)",
	} {
		fs.Func(name, help, func(v string) error { query.Set(name, v); return nil })
	}
	asJSON := fs.Bool("json", false, "print {\"runs\": [...]} as GET /v1/runs answers it")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	if !query.Has("limit") {
		query.Set("limit", "50")
	}
	f, err := server.ParseRunQuery(query, time.Now())
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	_, st, err := openConfigStore(ctx, *path)
	if err != nil {
		return err
	}
	defer st.Close()
	list, more, err := listRuns(ctx, st, f)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, list)
	}
	return printRunList(e.stdout, list, more, f.Limit)
}

// listRuns reads the runs f selects, at most f.Limit of them, as GET
// /v1/runs lists them; more reports that there were others past the limit.
func listRuns(ctx context.Context, st store.RunLister, f store.RunFilter) (list server.RunList, more bool, err error) {
	limit := f.Limit
	f.Limit++
	runs, err := st.ListRuns(ctx, f)
	if err != nil {
		return server.RunList{}, false, err
	}
	more = len(runs) > limit
	runs = runs[:min(len(runs), limit)]
	list = server.RunList{Runs: make([]server.RunListEntry, 0, len(runs))}
	for i := range runs {
		list.Runs = append(list.Runs, server.NewRunListEntry(&runs[i]))
	}
	return list, more, nil
}

// printRunList prints the runs as a table, in local time, and, when there
// were more than limit, how to see the others.
func printRunList(w io.Writer, list server.RunList, more bool, limit int) error {
	if len(list.Runs) == 0 {
		fmt.Fprintln(w, "No runs.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tKEY\tPRINCIPAL\tCALLS\tLAST CALL\tCREATED\tLAST CHANGE")
	for _, r := range list.Runs {
		last := "-"
		if r.LastTool != "" {
			last = r.LastTool + " " + string(r.LastOutcome)
		}
		key := r.Key
		if key == "" {
			key = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.RunID, key, r.PrincipalID, r.Step, last,
			r.CreatedAt.Local().Format(time.DateTime), r.UpdatedAt.Local().Format(time.DateTime))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(w, "\nShowing the newest %s; --limit or --since for others.\n", nouns(limit, "run", "runs"))
	}
	return nil
}
