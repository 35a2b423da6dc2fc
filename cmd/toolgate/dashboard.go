package main

import (
	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/server"
)

// dashboardRoutes are the dashboard at / with its files, and the breaker
// states it shows.
func dashboardRoutes(gw *toolgate.Gateway) []server.Mount {
	page := dashboard.Handler()
	return []server.Mount{
		{Pattern: "GET /{$}", Handler: page, Public: true},
		{Pattern: "GET /assets/", Handler: page, Public: true},
		{Pattern: "GET /favicon.ico", Handler: page, Public: true},
		{Pattern: "GET /v1/breakers", Handler: dashboard.Breakers(gw.Breakers)},
	}
}
