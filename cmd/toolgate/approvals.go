package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
)

// runApprovals is toolgate approvals: list the approvals of the config's
// store, or approve or deny one, as a person.
func runApprovals(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "approvals", "list|approve ID|deny ID [--by NAME] [--comment TEXT]",
		"toolgate approvals list --config toolgate.yaml\ntoolgate approvals approve apr_1c2d --by alice --comment \"verified with the customer\"")
	path := fs.String("config", "toolgate.yaml", "the config file")
	by := fs.String("by", "", "who decides (required for approve and deny)")
	comment := fs.String("comment", "", "why (shown to the model on a denial)")
	status := fs.String("status", "pending", "with list: pending, approved, denied or all")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	verb, id, err := approvalsVerb(pos)
	if err != nil {
		return err
	}
	// Deciding and listing read and write the store only: no secret of
	// the config is needed, and no operation is recovered.
	gw, closeStore, err := openReadOnly(ctx, *path)
	if err != nil {
		return err
	}
	defer closeStore()
	if verb == "list" {
		st := store.ApprovalStatus(*status)
		if *status == "all" {
			st = ""
		}
		list, err := gw.Approvals(ctx, st, 200)
		if err != nil {
			return err
		}
		return printApprovals(e, gw.Config(), list, *status, *asJSON)
	}
	if *by == "" {
		return fmt.Errorf("%w: --by is required: a decision names who made it", errUsage)
	}
	return decideApproval(ctx, e, gw, id, verb == "approve", *by, *comment, *asJSON)
}

// approvalsVerb is the verb of toolgate approvals (list, approve or deny)
// and, but for list, the approval's id.
func approvalsVerb(pos []string) (verb, id string, err error) {
	if len(pos) == 0 {
		return "", "", fmt.Errorf("%w: want list, approve ID or deny ID", errUsage)
	}
	verb = pos[0]
	switch {
	case verb == "list" && len(pos) == 1:
	case verb == "list":
		return "", "", fmt.Errorf("%w: unexpected argument %q", errUsage, pos[1])
	case verb == "approve" || verb == "deny":
		if len(pos) != 2 {
			return "", "", fmt.Errorf("%w: %s needs one approval id", errUsage, verb)
		}
		id = pos[1]
	default:
		return "", "", fmt.Errorf("%w: unknown verb %q (list, approve, deny)", errUsage, verb)
	}
	return verb, id, nil
}

// decideApproval approves or denies the approval id as by and prints the
// decided approval, as JSON or as a sentence saying what the model's
// repeat of the call will now do.
func decideApproval(ctx context.Context, e *env, gw *toolgate.Gateway, id string, approve bool, by, comment string, asJSON bool) error {
	a, err := gw.Decide(ctx, id, approve, by, comment)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no approval %s", id)
	}
	if errors.Is(err, store.ErrApprovalDecided) {
		return fmt.Errorf("approval %s is %s already (or expired at %s); nothing changed", id, a.Status, a.ExpiresAt.Local().Format(time.DateTime))
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(a)
	}
	fmt.Fprintf(e.stdout, "Approval %s is %s by %s: %s %s for %s. The model's repeat of that exact call will now %s.\n",
		a.ID, a.Status, a.By, a.Tool, clip(string(a.Args), 80), a.PrincipalID,
		map[bool]string{true: "run, once", false: "be told it was denied"}[approve])
	return nil
}

// ruleText is the rule that asked for an approval, as the config writes
// it (its deny expression), found by the tool and the rule's code; the
// code when the config has no such rule any more.
func ruleText(cfg *config.Config, a *store.Approval) string {
	if t, ok := cfg.Tools[a.Tool]; ok {
		for _, r := range t.Rules {
			if r.Approval && r.Code == a.Rule {
				return r.Deny
			}
		}
	}
	return a.Rule + " (no longer in the config)"
}

// printApprovals prints the approvals of approvals list, as a table or as
// JSON.
func printApprovals(e *env, cfg *config.Config, list []store.Approval, status string, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"approvals": list})
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "No %s approvals.\n", status)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tTOOL\tPRINCIPAL\tARGS\tASKED\tEXPIRES\tRULE")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Tool, a.PrincipalID, clip(string(a.Args), 50),
			a.CreatedAt.Local().Format(time.DateTime), a.ExpiresAt.Local().Format(time.DateTime), ruleText(cfg, &a))
	}
	return tw.Flush()
}
