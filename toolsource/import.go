package toolsource

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/toolsource/openapi"
)

// DefaultImportTimeout bounds reading the OpenAPI documents, connecting
// to the MCP servers and listing their tools when a gateway opens.
const DefaultImportTimeout = 30 * time.Second

// Imports is what Import found: the config with the imported tools merged
// in, and each importing dependency's list as its source gave it.
type Imports struct {
	// Config is the merged config.
	Config *config.Config
	// Lists are the tools each dependency listed, by dependency name.
	Lists map[string][]config.ImportedTool
	// Reports say, per OpenAPI document, how many operations were
	// imported, which were skipped and why, and the name collisions.
	Reports []*openapi.Report
}

// Import reads the OpenAPI documents of a loaded config and connects to
// its MCP servers that import tools, lists their tools and merges them in,
// then stops the servers: what a gateway opened on cfg would serve
// (`toolgate check`, `toolgate tools`, `toolgate whatif`). A config without
// imports comes back as it is. The error lists every document that cannot
// be read, every operation an import names that its document lacks, every
// server that could not be reached and every problem of the merge.
func Import(ctx context.Context, cfg *config.Config, timeout time.Duration) (*Imports, error) {
	if !cfg.ImportsPending() {
		return &Imports{Config: cfg}, nil
	}
	if timeout <= 0 {
		timeout = DefaultImportTimeout
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lists := map[string][]config.ImportedTool{}
	var reports []*openapi.Report
	if openapi.Has(cfg) {
		var err error
		if lists, reports, err = openapi.ImportAll(ictx, cfg, openapi.Options{}); err != nil {
			return &Imports{Config: cfg, Reports: reports}, err
		}
	}
	if mcpcall.HasMCP(cfg) {
		pool := mcpcall.New(cfg, mcpcall.Options{})
		defer pool.Close()
		mcpLists, err := pool.Import(ictx, cfg)
		if err != nil {
			return nil, err
		}
		maps.Copy(lists, mcpLists)
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return &Imports{Config: cfg, Lists: lists, Reports: reports}, err
	}
	return &Imports{Config: merged, Lists: lists, Reports: reports}, nil
}

// importOpenAPI reads the OpenAPI document of every dependency that has
// one and returns their tools by dependency (an empty map without any).
// A document that cannot be read, or an import naming an operation the
// document lacks, keeps the gateway from opening.
func importOpenAPI(ctx context.Context, cfg *config.Config) (map[string][]config.ImportedTool, error) {
	if !openapi.Has(cfg) {
		return map[string][]config.ImportedTool{}, nil
	}
	lists, _, err := openapi.ImportAll(ctx, cfg, openapi.Options{})
	if err != nil {
		return nil, fmt.Errorf("toolgate: importing OpenAPI operations: %w", err)
	}
	return lists, nil
}
