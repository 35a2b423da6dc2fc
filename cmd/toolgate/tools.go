package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

func init() {
	register("tools", "print the tool list for OpenAI, Anthropic or MCP", runTools)
}

func runTools(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "tools", "[--config FILE] [--format openai|anthropic|mcp] [--offline]",
		"toolgate tools --config toolgate.yaml --format openai > tools.json\n"+
			"toolgate tools --config toolgate.yaml    # each tool's effect and source (config, go, or the MCP server it comes from)")
	path := fs.String("config", "toolgate.yaml", "the config file")
	format := fs.String("format", "", "openai, anthropic or mcp (default: toolgate's own {\"tools\": [...]} with effects)")
	offline := fs.Bool("offline", false, "do not connect to the MCP servers: list the declared tools only")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg, err := config.Load(*path)
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
	list, err := export.Format(cfg, *format)
	if err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	return printJSON(e.stdout, list)
}
