package server

import (
	"context"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
)

// catalogue is the catalogue of the caller's key (every tool in
// development mode): what GET /v1/tools lists and what its runs may call.
func (s *Server) catalogue(ctx context.Context) *config.Catalogue {
	return s.gw.Catalogue(KeyName(ctx))
}

// listedTools is the configuration view of the tools the caller's lists
// show: its key's tools: list, narrowed by the key's pinned principal.
func (s *Server) listedTools(ctx context.Context) *config.Config {
	return export.Subset(s.gw.Config(), s.catalogue(ctx).Listed)
}
