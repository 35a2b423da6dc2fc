package toolgate

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/config/openapi"
)

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

// reloadLists are the tool lists a reload merges: the OpenAPI documents
// of cfg read again (a changed document or import takes effect), and the
// lists the MCP servers last gave (the servers themselves do not change
// on a reload). Called with u.mu held.
func (u *upstreams) reloadLists(cfg *config.Config) (map[string][]config.ImportedTool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultImportTimeout)
	defer cancel()
	lists, err := importOpenAPI(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for name, l := range u.lists {
		if d := cfg.Dependencies[name]; d != nil && d.MCP != nil {
			lists[name] = l
		}
	}
	return lists, nil
}

// reloadOpenAPI reloads a gateway that opened without imported tools into
// cfg, whose OpenAPI documents are read now.
func reloadOpenAPI(cfg *config.Config, apply func(*config.Config) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultImportTimeout)
	defer cancel()
	lists, err := importOpenAPI(ctx, cfg)
	if err != nil {
		return err
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return err
	}
	return apply(merged)
}
