package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate"
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
	fs := flags(e, "replay", "RUN [--config FILE] [--json]",
		"toolgate replay run_8c1f --config toolgate.yaml\ntoolgate replay run_8c1f --json")
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
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
	rep, err := gw.Replay(ctx, pos[0])
	if errors.Is(err, toolgate.ErrUnknownRun) {
		return fmt.Errorf("no run %q in the store %s", pos[0], gw.Config().Store)
	}
	if err != nil {
		return err
	}
	run, err := gw.GetRun(ctx, pos[0])
	if err != nil {
		return err
	}
	out := replayReport{RunID: run.ID, State: rep.State, StoredState: run.State, Matches: rep.Matches, Steps: rep.Steps}
	if *asJSON {
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "Run %s: state rebuilt from %d execution row(s):\n  %s\n", run.ID, rep.Steps, rep.State)
		if rep.Matches {
			fmt.Fprintln(e.stdout, "It matches the stored state.")
		} else {
			fmt.Fprintf(e.stdout, "It does NOT match the stored state:\n  %s\n", run.State)
		}
	}
	if !rep.Matches {
		return fmt.Errorf("run %s: the state rebuilt from the log does not match the stored state", run.ID)
	}
	return nil
}
