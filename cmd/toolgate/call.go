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

func runCall(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "call", "--tool NAME [--args JSON] (--run RUN | --principal JSON) [--config FILE]",
		`toolgate call --config toolgate.yaml --principal '{"id":"cust_42","permissions":["refunds:write"]}' \
    --tool issue_refund --args '{"order_id":"ORD-4471","amount_paise":425000}'
toolgate call --run run_8c1f --tool get_order --args '{"order_id":"ORD-4471"}'`)
	path := fs.String("config", "toolgate.yaml", "the config file (its store holds the runs)")
	tool := fs.String("tool", "", "the tool to call (required)")
	argsJSON := fs.String("args", "{}", "the arguments, a JSON object")
	runID := fs.String("run", "", "an existing run to call in")
	principal := fs.String("principal", "", `start a new run for this principal, e.g. {"id":"cust_42","permissions":["refunds:write"]}`)
	initState := fs.String("state", "", "with --principal: the new run's initial state, a JSON object")
	maxSteps := fs.Int64("max-steps", 0, "with --principal: the new run's step budget (0: none)")
	owner := fs.String("owner", "", "with --principal: the API key name that owns the new run (that key then sees it over HTTP)")
	newRunID := fs.String("run-id", "", "with --principal: the new run's id (default: a fresh one)")
	callID := fs.String("call-id", "", "the model's id for the call (default: a fresh one)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case *tool == "":
		return fmt.Errorf("%w: --tool is required", errUsage)
	case (*runID == "") == (*principal == ""):
		return fmt.Errorf("%w: give --run RUN, or --principal JSON to start a new run", errUsage)
	case *runID != "" && (*initState != "" || *maxSteps != 0 || *owner != "" || *newRunID != ""):
		return fmt.Errorf("%w: --state, --max-steps, --owner and --run-id go with --principal (a new run)", errUsage)
	case *maxSteps < 0:
		return fmt.Errorf("%w: --max-steps must not be negative", errUsage)
	}
	if kind := jsonKind([]byte(*argsJSON)); kind != "an object" {
		return fmt.Errorf("%w: --args must be a JSON object of named arguments, got %s", errUsage, kind)
	}
	var p toolgate.Principal
	if *principal != "" {
		var err error
		if p, err = toolgate.ParsePrincipal([]byte(*principal)); err != nil {
			return fmt.Errorf("%w: --principal: %v", errUsage, err)
		}
	}
	if *initState != "" && jsonKind([]byte(*initState)) != "an object" {
		return fmt.Errorf("%w: --state must be a JSON object", errUsage)
	}

	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := toolgate.Open(ctx, toolgate.Options{ConfigPath: *path, StoreFromConfig: true, Logger: logger})
	if err != nil {
		return err
	}
	defer gw.Close()
	id := *runID
	if id == "" {
		run, err := gw.StartRun(ctx, toolgate.RunOptions{ID: *newRunID, Principal: p, State: json.RawMessage(*initState),
			MaxSteps: *maxSteps, Owner: *owner})
		if err != nil {
			return err
		}
		id = run.ID
		if gw.Config().Store == "memory" {
			fmt.Fprintln(e.stderr, "toolgate call: the store is memory: the run and this call are not kept after this command")
		}
	}
	res, err := gw.Do(ctx, &toolgate.Call{RunID: id, Tool: *tool, Args: json.RawMessage(*argsJSON), CallID: *callID})
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
		return fmt.Errorf("%s ended with %s (the envelope above says what happened and what to do)", *tool, res.Code())
	}
	return nil
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
