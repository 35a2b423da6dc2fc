package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/expr"
	"github.com/toolgate/toolgate/validate"
)

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "check", "--config FILE [--offline]", "toolgate check --config toolgate.yaml\ntoolgate check --config toolgate.yaml --offline   # do not connect to the MCP servers")
	path := fs.String("config", "toolgate.yaml", "the config file")
	offline := fs.Bool("offline", false, "do not connect to the MCP servers: check the file alone (tools: entries that override imported tools are not checked)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	var imports *toolgate.Imports
	if err == nil && cfg.ImportsPending() && !*offline {
		if imports, err = toolgate.Import(ctx, cfg, 0); err == nil {
			cfg = imports.Config
		} else if !errors.As(err, new(*config.Problem)) {
			err = fmt.Errorf("%w\n(toolgate check connects to the MCP servers to see what it would import; --offline checks the file alone)", err)
		}
	}
	if err == nil && !cfg.ImportsPending() {
		var env *expr.Env
		if env, err = expr.NewEnv(); err == nil {
			_, err = validate.Compile(cfg, env)
		}
	}
	if imports != nil {
		for _, r := range imports.Reports {
			r.Write(e.stdout)
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
	if cfg.ImportsPending() {
		fmt.Fprintf(e.stdout, "%s: ok offline (%d declared tools, %d dependencies; not connected to %s, so the imported tools and the %d tools: entries that override them are not checked)\n",
			*path, len(cfg.Tools), len(cfg.Dependencies), joinNames(cfg.ImportingDependencies()), len(cfg.Overrides()))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d tools, %d dependencies, version %s)\n", *path, len(cfg.Tools), len(cfg.Dependencies), cfg.Version)
	if imports != nil {
		printImports(e, imports)
	}
	return nil
}

// printImports says what each MCP server brings in: every tool with its
// effect, the ones the import leaves out, and the overrides. An OpenAPI
// document's report (operations imported, skipped and why, collisions)
// is printed before the problems or the ok line.
func printImports(e *env, im *toolgate.Imports) {
	for _, dep := range im.Config.ImportingDependencies() {
		if im.Config.Dependencies[dep].OpenAPI != "" {
			continue // its report was printed above
		}
		var brought, left []string
		for _, it := range im.Lists[dep] {
			name := config.ImportedName(im.Config.Dependencies[dep].Import.Prefix, it.Name)
			t := im.Config.Tools[name]
			if t == nil || t.Source == nil || t.Source.Dependency != dep {
				left = append(left, it.Name)
				continue
			}
			brought = append(brought, fmt.Sprintf("%s (%s)", name, t.Effect))
		}
		fmt.Fprintf(e.stdout, "%s: imports %d of %d tools: %s\n", dep, len(brought), len(im.Lists[dep]), joinNames(brought))
		if len(left) > 0 {
			fmt.Fprintf(e.stdout, "%s: not imported (not selected, or declared in full): %s\n", dep, joinNames(left))
		}
	}
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}
