package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/types"
)

func runReconcile(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "reconcile", "--config FILE [--json]", "toolgate reconcile --config toolgate.yaml")
	path := fs.String("config", "toolgate.yaml", "the config file")
	asJSON := fs.Bool("json", false, "print the outcome of each operation as JSON")
	limit := fs.Int("limit", 1000, "settle at most this many operations")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: *path, StoreFromConfig: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer gw.Close()
	settled, err := gw.Reconcile(ctx, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"operations": settled})
	}
	if len(settled) == 0 {
		fmt.Fprintln(e.stdout, "No operation has an unknown outcome.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tTOOL\tRUN\tOUTCOME")
	open := 0
	for _, s := range settled {
		outcome := "settled: it happened"
		if s.Code != types.CodeOK {
			outcome = string(s.Code)
			open++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Key, s.Tool, s.RunID, outcome)
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d operation(s) checked, %d settled, %d still unknown.\n", len(settled), len(settled)-open, open)
	return nil
}
