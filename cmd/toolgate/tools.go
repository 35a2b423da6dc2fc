package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

func init() {
	register("tools", "print the tool list for OpenAI, Anthropic or MCP", runTools)
}

func runTools(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "tools", "[--config FILE] [--format openai|openai-responses|anthropic|mcp]",
		"toolgate tools --config toolgate.yaml --format openai > tools.json")
	path := fs.String("config", "toolgate.yaml", "the config file")
	format := fs.String("format", "", "openai, openai-responses, anthropic or mcp (default: toolgate's own {\"tools\": [...]} with effects)")
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
	list, err := export.Format(cfg, *format)
	if err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	return printJSON(e.stdout, list)
}
