package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/types"
)

// runCall is toolgate call: one call through the gateway, in a run of the
// store or in a new one, its envelope printed as JSON.
func runCall(ctx context.Context, e *env, args []string) error {
	cf, err := parseCallFlags(e, args)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: cf.path, StoreFromConfig: true, Logger: logger})
	if err != nil {
		return err
	}
	defer gw.Close()
	var id string
	if cf.runID != "" {
		// As runs show finds it: p1 is the one key's run p1 (stored as
		// KEY/p1), unless --key says whose.
		run, err := findRun(ctx, gw.Store(), cf.runID, cf.key)
		if err != nil {
			return err
		}
		id = run.ID
	} else if id, err = cf.startRun(ctx, e, gw); err != nil {
		return err
	}
	res, err := gw.Do(ctx, &toolgate.Call{RunID: id, Tool: cf.tool, Args: json.RawMessage(cf.args), CallID: cf.callID})
	if errors.Is(err, toolgate.ErrUnknownRun) {
		return fmt.Errorf("no run %q in the store %s (start one with --principal)", id, gw.Config().Store)
	}
	if err != nil {
		return err
	}
	if err := printJSON(e.stdout, res); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("%s ended with %s (the envelope above says what happened and what to do)", cf.tool, res.Code())
	}
	return nil
}

// callFlags are the flags of toolgate call, parsed and checked.
type callFlags struct {
	path, tool, args, callID string
	// runID is the run to call in, of key's when set; "" starts a new
	// run for principal.
	runID, key string
	// The new run's principal, state, step budget, owner and id.
	principal                  toolgate.Principal
	initState, owner, newRunID string
	maxSteps                   int64
}

// parseCallFlags parses and checks the flags of toolgate call: a usage
// error when they do not name a tool and exactly one of --run and
// --principal, or when a JSON value is not an object.
func parseCallFlags(e *env, args []string) (*callFlags, error) {
	fs := flags(e, "call", "--tool NAME [--args JSON] (--run RUN | --principal JSON) [--config FILE]",
		`toolgate call --config toolgate.yaml --principal '{"id":"cust_42","permissions":["refunds:write"]}' \
    --tool issue_refund --args '{"order_id":"ORD-4471","amount_paise":425000}'
toolgate call --run run_8c1f --tool get_order --args '{"order_id":"ORD-4471"}'`)
	cf := &callFlags{}
	fs.StringVar(&cf.path, "config", "toolgate.yaml", "the config file (its store holds the runs)")
	fs.StringVar(&cf.tool, "tool", "", "the tool to call (required)")
	fs.StringVar(&cf.args, "args", "{}", "the arguments, a JSON object")
	fs.StringVar(&cf.runID, "run", "", "an existing run to call in")
	fs.StringVar(&cf.key, "key", "", "with --run: the auth.keys name whose run RUN is (default: the one key with a run of that id)")
	principal := fs.String("principal", "", `start a new run for this principal, e.g. {"id":"cust_42","permissions":["refunds:write"]}`)
	fs.StringVar(&cf.initState, "state", "", "with --principal: the new run's initial state, a JSON object")
	fs.Int64Var(&cf.maxSteps, "max-steps", 0, "with --principal: the new run's step budget (0: none)")
	fs.StringVar(&cf.owner, "owner", "", "with --principal: the API key name that owns the new run (stored as OWNER/ID: that key then sees it over HTTP as ID)")
	fs.StringVar(&cf.newRunID, "run-id", "", "with --principal: the new run's id (default: a fresh one)")
	fs.StringVar(&cf.callID, "call-id", "", "the model's id for the call (default: a fresh one)")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case cf.tool == "":
		return nil, fmt.Errorf("%w: --tool is required", errUsage)
	case (cf.runID == "") == (*principal == ""):
		return nil, fmt.Errorf("%w: give --run RUN, or --principal JSON to start a new run", errUsage)
	case cf.runID != "" && (cf.initState != "" || cf.maxSteps != 0 || cf.owner != "" || cf.newRunID != ""):
		return nil, fmt.Errorf("%w: --state, --max-steps, --owner and --run-id go with --principal (a new run)", errUsage)
	case cf.key != "" && cf.runID == "":
		return nil, fmt.Errorf("%w: --key goes with --run (a new run's key is --owner)", errUsage)
	case cf.maxSteps < 0:
		return nil, fmt.Errorf("%w: --max-steps must not be negative", errUsage)
	}
	if kind := jsonKind([]byte(cf.args)); kind != "an object" {
		return nil, fmt.Errorf("%w: --args must be a JSON object of named arguments, got %s", errUsage, kind)
	}
	if *principal != "" {
		var err error
		if cf.principal, err = toolgate.ParsePrincipal([]byte(*principal)); err != nil {
			return nil, fmt.Errorf("%w: --principal: %v", errUsage, err)
		}
	}
	if cf.initState != "" && jsonKind([]byte(cf.initState)) != "an object" {
		return nil, fmt.Errorf("%w: --state must be a JSON object", errUsage)
	}
	return cf, nil
}

// startRun starts the new run the flags describe and returns its id,
// warning on stderr when the store keeps nothing after the command.
func (cf *callFlags) startRun(ctx context.Context, e *env, gw *toolgate.Gateway) (string, error) {
	// With --owner, stored under that key as the server stores the runs
	// a key starts: the key sees it (and runs show --key finds it) as its
	// id.
	run, err := gw.StartRun(ctx, toolgate.RunOptions{ID: cf.newRunID, Principal: cf.principal, State: json.RawMessage(cf.initState),
		MaxSteps: cf.maxSteps, Owner: cf.owner})
	if err != nil {
		return "", err
	}
	if gw.Config().Store == "memory" {
		fmt.Fprintln(e.stderr, "toolgate call: the store is memory: the run and this call are not kept after this command")
	}
	return run.ID, nil
}

// printJSON prints v as indented JSON, without escaping <, > and & (the
// observations are text for people and models).
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonKind names the JSON kind of raw ("an object", "an array", ...) or
// says it is not JSON.
func jsonKind(raw []byte) string {
	if !json.Valid(raw) {
		return "text that is not valid JSON"
	}
	return types.JSONKind(raw)
}
