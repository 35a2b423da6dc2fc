package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store/storeurl"
)

// runWhatif is toolgate whatif: the recorded calls of one run, or of every
// run over a past period, judged again under another config, and those
// that would be judged differently listed.
func runWhatif(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "whatif", "--config NEW.yaml (--run RUN | --since 24h) [--json]",
		"toolgate whatif --config toolgate.new.yaml --run run_8c1f\ntoolgate whatif --config toolgate.new.yaml --since 24h --json")
	path := fs.String("config", "toolgate.yaml", "the config to judge the recorded calls under")
	storeURL := fs.String("store", "", "the store holding the recorded calls (default: the config's store)")
	runID := fs.String("run", "", "judge the calls of this run (the id its key gave it)")
	key := fs.String("key", "", "with --run: the auth.keys name whose run it is (default: the one key with a run of that id)")
	since := fs.Duration("since", 0, "judge the calls of every run over this past period (e.g. 24h)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	if (*runID == "") == (*since == 0) {
		return fmt.Errorf("%w: give exactly one of --run or --since", errUsage)
	}
	cfg, err := loadJudgingConfig(ctx, *path)
	if err != nil {
		return err
	}
	url := *storeURL
	if url == "" {
		url = cfg.Store
	}
	st, err := storeurl.Open(ctx, url, storeurl.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	scope := whatif.Scope{}
	if *runID != "" {
		run, err := findRun(ctx, st, *runID, *key)
		if err != nil {
			return err
		}
		scope.RunID = run.ID
	}
	if *since > 0 {
		scope.Since = time.Now().Add(-*since)
	}
	rep, err := whatif.Judge(ctx, st, cfg, scope)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printWhatif(e, rep, *path)
}

// loadJudgingConfig loads the config at path without its secrets, with
// its imported tools merged in: their schemas come from their MCP servers,
// and listing them executes nothing.
func loadJudgingConfig(ctx context.Context, path string) (*config.Config, error) {
	cfg, err := loadWithoutSecrets(path)
	if err != nil {
		return nil, err
	}
	if cfg.ImportsPending() {
		im, err := toolgate.Import(ctx, cfg, 0)
		if err != nil {
			return nil, err
		}
		cfg = im.Config
	}
	return cfg, nil
}

// printWhatif prints the report as text: how many calls were judged under
// the config at path, and a table of those judged differently, each with
// what decided it now.
func printWhatif(e *env, rep *whatif.Report, path string) error {
	fmt.Fprintf(e.stdout, "%s judged under %s; %d would be judged differently.\n", nouns(rep.Judged, "recorded call", "recorded calls"), path, len(rep.Changes))
	if len(rep.Changes) == 0 {
		return nil
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTEP\tTOOL\tARGS\tWAS\tNOW\tDECIDED BY")
	for _, c := range rep.Changes {
		by := c.Now.Rule
		if by == "" && !c.Now.Allowed {
			by = string(c.Now.Code)
		}
		if c.Now.Allowed {
			by = "no longer refused (was " + string(c.Was.Code) + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", c.RunID, c.Step, c.Tool, clip(string(c.Args), 60), c.Was, c.Now, by)
	}
	return tw.Flush()
}

// clip is s when it is at most n bytes long, else its first n-1 bytes
// and an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
