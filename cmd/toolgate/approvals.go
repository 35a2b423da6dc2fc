package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/store"
)

func runApprovals(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "approvals", "list|approve ID|deny ID [--by NAME] [--comment TEXT]",
		"toolgate approvals list --config toolgate.yaml\ntoolgate approvals approve apr_1c2d --by alice --comment \"verified with the customer\"")
	path := fs.String("config", "toolgate.yaml", "the config file")
	by := fs.String("by", "", "who decides (required for approve and deny)")
	comment := fs.String("comment", "", "why (shown to the model on a denial)")
	status := fs.String("status", "pending", "with list: pending, approved, denied or all")
	asJSON := fs.Bool("json", false, "print JSON")
	if len(args) == 0 {
		return fmt.Errorf("%w: want list, approve ID or deny ID", errUsage)
	}
	verb, rest := args[0], args[1:]
	id := ""
	if verb == "approve" || verb == "deny" {
		if len(rest) == 0 {
			return fmt.Errorf("%w: %s needs an approval id", errUsage, verb)
		}
		id, rest = rest[0], rest[1:]
	} else if verb != "list" {
		if verb == "-h" || verb == "--help" {
			return parse(fs, args)
		}
		return fmt.Errorf("%w: unknown verb %q (list, approve, deny)", errUsage, verb)
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: *path, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer gw.Close()
	if verb == "list" {
		st := store.ApprovalStatus(*status)
		if *status == "all" {
			st = ""
		}
		list, err := gw.Approvals(ctx, st, 200)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]any{"approvals": list})
		}
		if len(list) == 0 {
			fmt.Fprintf(e.stdout, "No %s approvals.\n", *status)
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tTOOL\tPRINCIPAL\tARGS\tASKED\tEXPIRES\tRULE")
		for _, a := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Tool, a.PrincipalID, clip(string(a.Args), 50),
				a.CreatedAt.Local().Format(time.DateTime), a.ExpiresAt.Local().Format(time.DateTime), a.Rule)
		}
		return tw.Flush()
	}
	if *by == "" {
		return fmt.Errorf("%w: --by is required: a decision names who made it", errUsage)
	}
	a, err := gw.Decide(ctx, id, verb == "approve", *by, *comment)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no approval %s", id)
	}
	if errors.Is(err, store.ErrApprovalDecided) {
		return fmt.Errorf("approval %s is %s already (or expired at %s); nothing changed", id, a.Status, a.ExpiresAt.Local().Format(time.DateTime))
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(a)
	}
	fmt.Fprintf(e.stdout, "Approval %s is %s by %s: %s %s for %s. The model's repeat of that exact call will now %s.\n",
		a.ID, a.Status, a.By, a.Tool, clip(string(a.Args), 80), a.PrincipalID,
		map[bool]string{true: "run, once", false: "be told it was denied"}[verb == "approve"])
	return nil
}
