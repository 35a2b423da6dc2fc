package server

import (
	"context"
	"net/http"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/export"
	"github.com/toolgate/toolgate/types"
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

// toolsInScope is the view GET /v1/tools lists: the caller's key's tools
// (scope ""), or every tool (scope "all"), which is an operator's view
// (the dashboard's) and open to approver keys only, and to every caller in
// development mode.
func (s *Server) toolsInScope(ctx context.Context, scope string) (*config.Config, *apiError) {
	switch scope {
	case "":
		return s.listedTools(ctx), nil
	case "all":
		if !s.approver(ctx) {
			return nil, &apiError{status: http.StatusForbidden, code: types.CodeForbidden,
				message: "scope=all lists every tool and is for approver keys (operators, the dashboard); leave scope out for this key's tools"}
		}
		return s.gw.Config(), nil
	}
	return nil, badRequest("scope %q is not one of all (every tool, for approver keys) or none (this key's tools)", clip(scope))
}
