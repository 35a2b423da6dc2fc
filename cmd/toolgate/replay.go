package main

import (
	"context"
	"encoding/json"
	"fmt"
)

// replayReport is what `toolgate replay --json` prints.
type replayReport struct {
	RunID       string          `json:"run_id"`
	State       json.RawMessage `json:"state"`
	StoredState json.RawMessage `json:"stored_state"`
	Matches     bool            `json:"matches"`
	Steps       int             `json:"steps"`
}

func runReplay(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "replay", "RUN [--key NAME] [--config FILE] [--json]",
		"toolgate replay p1 --config toolgate.yaml\ntoolgate replay p1 --key support-bot --json")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
	key := fs.String("key", "", "the auth.keys name whose run RUN is (default: the one key with a run of that id)")
	asJSON := fs.Bool("json", false, "print {run_id, state, stored_state, matches, steps} as JSON")
	pos, err := positional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want: replay RUN", errUsage)
	}
	gw, closeStore, err := openReadOnly(ctx, *path)
	if err != nil {
		return err
	}
	defer closeStore()
	run, err := findRun(ctx, gw.Store(), pos[0], *key)
	if err != nil {
		return err
	}
	rep, err := gw.Replay(ctx, run.ID)
	if err != nil {
		return err
	}
	out := replayReport{RunID: run.PublicID(), State: rep.State, StoredState: run.State, Matches: rep.Matches, Steps: rep.Steps}
	if *asJSON {
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "Run %s: state rebuilt from %s:\n  %s\n", run.PublicID(), count(rep.Steps, "execution row", "execution rows"), rep.State)
		if rep.Matches {
			fmt.Fprintln(e.stdout, "It matches the stored state.")
		} else {
			fmt.Fprintf(e.stdout, "It does NOT match the stored state:\n  %s\n", run.State)
		}
	}
	if !rep.Matches {
		return fmt.Errorf("run %s: the state rebuilt from the log does not match the stored state", run.PublicID())
	}
	return nil
}
