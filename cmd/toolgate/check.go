package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/config/openapi"
	"github.com/toolgate/toolgate/internal/expr"
	"github.com/toolgate/toolgate/validate"
)

func init() {
	register("check", "validate a config and list every problem in it", runCheck)
}

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "check", "--config FILE", "toolgate check --config toolgate.yaml")
	path := fs.String("config", "toolgate.yaml", "the config file")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	var reports []*openapi.Report
	if err == nil {
		cfg, reports, err = importOffline(ctx, cfg)
	}
	writeReports(e.stdout, reports)
	if err == nil {
		var env *expr.Env
		if env, err = expr.NewEnv(); err == nil {
			_, err = validate.Compile(cfg, env)
		}
	}
	if err != nil {
		n := 1
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			n = len(j.Unwrap())
		}
		fmt.Fprintf(e.stdout, "%s: %d problem(s):\n%v\n", *path, n, err)
		return errors.New("the config has problems")
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d tools, %d dependencies, version %s)\n", *path, len(cfg.Tools), len(cfg.Dependencies), cfg.Version)
	return nil
}
