package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/validate"
)

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "check", "--config FILE [--offline]", "toolgate check --config toolgate.yaml\ntoolgate check --config toolgate.yaml --offline   # do not connect to the MCP servers")
	path := fs.String("config", "toolgate.yaml", "the config file")
	offline := fs.Bool("offline", false, "do not connect to the MCP servers: check the file alone (the declared tools are compiled; tools: entries that override imported tools are not checked, and a name that is not declared is taken to be imported)")
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
	problems := checkProblems(cfg, err)
	if imports != nil {
		for _, r := range imports.Reports {
			r.Write(e.stdout)
		}
		problems = append(problems, permissionWarnings(cfg)...)
	}
	config.SortProblems(problems)
	var errs, warnings []*config.Problem
	for _, p := range problems {
		if p.Warning {
			warnings = append(warnings, p)
		} else {
			errs = append(errs, p)
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stdout, w)
	}
	if len(errs) > 0 {
		fmt.Fprintf(e.stdout, "%s: %d %s:\n", *path, len(errs), plural(len(errs), "problem"))
		for _, p := range errs {
			fmt.Fprintln(e.stdout, p)
		}
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

// checkProblems lists every problem of the config in one run: those of
// loading (YAML, unknown and duplicate keys, structure) in loadErr, then,
// when the file could be decoded, those of compiling its tools (references,
// schemas, CEL typed against each tool's input schema), each placed at its
// line. A compile problem at a key that loading already faulted is left
// out: it would say the same thing twice.
func checkProblems(cfg *config.Config, loadErr error) []*config.Problem {
	ps := configProblems(loadErr)
	if cfg == nil {
		return ps
	}
	env, err := expr.NewEnv()
	if err == nil {
		_, err = validate.Compile(cfg, env)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Key] = true
	}
	for _, e := range unjoin(err) {
		p := &config.Problem{Why: e.Error()}
		var vp *validate.Problem
		if errors.As(e, &vp) {
			p.Key, p.Why = vp.Path(), vp.Why
		}
		if p.Key != "" && seen[p.Key] {
			continue
		}
		cfg.Place(p)
		ps = append(ps, p)
	}
	return ps
}

// configProblems unpacks a load error into its problems.
func configProblems(err error) []*config.Problem {
	var ps []*config.Problem
	for _, e := range unjoin(err) {
		var p *config.Problem
		if !errors.As(e, &p) {
			p = &config.Problem{Why: e.Error()}
		}
		ps = append(ps, p)
	}
	return ps
}

// unjoin lists the errors an errors.Join holds (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// permissionWarnings warns, per dependency, about imported tools that are
// writes with no permission: any key that sees them may call them.
func permissionWarnings(cfg *config.Config) []*config.Problem {
	open := map[string][]string{}
	for _, name := range cfg.ToolNames() {
		t := cfg.Tools[name]
		if t != nil && t.Source != nil && t.Source.Dependency != "" && t.Effect == "write" && t.Permission == "" {
			open[t.Source.Dependency] = append(open[t.Source.Dependency], name)
		}
	}
	var ps []*config.Problem
	for _, dep := range slices.Sorted(maps.Keys(open)) {
		names := open[dep]
		p := &config.Problem{Key: "dependencies." + dep + ".import", Warning: true,
			Why: fmt.Sprintf("imported %s with no permission, which any key that sees %s may call: %s; give each a permission in a tools: entry (tools: {%s: {permission: ...}})",
				plural(len(names), "write"), itThem(len(names)), joinNames(names), names[0])}
		cfg.Place(p)
		ps = append(ps, p)
	}
	return ps
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

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
