package main

import (
	"context"
	"log/slog"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/server"
)

// The dashboard at / and the breaker states it shows.
func init() {
	serveHooks = append(serveHooks, serveHook{Mounts: func(ctx context.Context, gw *toolgate.Gateway, log *slog.Logger) ([]server.Mount, func(), error) {
		page := dashboard.Handler()
		return []server.Mount{
			{Pattern: "GET /{$}", Handler: page, Public: true},
			{Pattern: "GET /assets/", Handler: page, Public: true},
			{Pattern: "GET /favicon.ico", Handler: page, Public: true},
			{Pattern: "GET /v1/breakers", Handler: dashboard.Breakers(gw.Breakers)},
		}, nil, nil
	}})
}
