package main

import (
	"context"
	"fmt"
	"io"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/config/openapi"
	"github.com/toolgate/toolgate/execute/mcpcall"
)

// importOffline merges into cfg the tools of its OpenAPI documents (read
// now, from their files or URLs), so that check and tools see them. The
// tools of MCP servers are listed only by a running gateway: with MCP
// imports in the config too, the documents are read and reported but not
// merged (overrides of MCP tools could not be judged). The reports say,
// per document, what was imported, skipped and why.
func importOffline(ctx context.Context, cfg *config.Config) (*config.Config, []*openapi.Report, error) {
	if !openapi.Has(cfg) {
		return cfg, nil, nil
	}
	lists, reports, err := openapi.ImportAll(ctx, cfg, openapi.Options{})
	if err != nil || mcpcall.HasMCP(cfg) {
		return cfg, reports, err
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return cfg, reports, err
	}
	return merged, reports, nil
}

// writeReports prints what became of each document's operations.
func writeReports(w io.Writer, reports []*openapi.Report) {
	for _, r := range reports {
		r.Write(w)
	}
	if len(reports) > 0 {
		fmt.Fprintln(w)
	}
}
