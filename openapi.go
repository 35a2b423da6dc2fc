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
