package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

func runTools(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "tools", "[--config FILE] [--format openai|openai-responses|anthropic|mcp] [--key NAME] [--offline]",
		"toolgate tools --config toolgate.yaml --format openai --key support-bot > tools.json\n"+
			"toolgate tools --config toolgate.yaml    # each tool's effect and source (config, go, or the MCP server it comes from)")
	path := fs.String("config", "toolgate.yaml", "the config file")
	format := fs.String("format", "", "openai, openai-responses, anthropic or mcp (default: toolgate's own {\"tools\": [...]} with effects)")
	key := fs.String("key", "", "list only what this auth.keys entry sees: its tools: list, narrowed by its pinned principal (default: every tool)")
	offline := fs.Bool("offline", false, "do not connect to the MCP servers: list the declared tools only")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg, err := loadWithoutSecrets(*path)
	if err != nil {
		return err
	}
	if cfg.ImportsPending() && !*offline {
		im, err := toolgate.Import(ctx, cfg, 0)
		if err != nil {
			return err
		}
		cfg = im.Config
	}
	if *key != "" {
		if cfg, err = keyView(cfg, *key); err != nil {
			return err
		}
	}
	list, err := export.Format(cfg, *format)
	if err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	return printJSON(e.stdout, list)
}

// keyView is the view of cfg that the named key's lists show.
func keyView(cfg *config.Config, key string) (*config.Config, error) {
	names := make([]string, 0, len(cfg.Auth.Keys))
	found := false
	for _, k := range cfg.Auth.Keys {
		names = append(names, k.Name)
		found = found || k.Name == key
	}
	if !found {
		return nil, fmt.Errorf("%w: --key: no auth.keys entry is named %q (have: %s)", errUsage, key, strings.Join(names, ", "))
	}
	cats, problems := cfg.Catalogues()
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	return export.Subset(cfg, cats.For(key).Listed), nil
}
