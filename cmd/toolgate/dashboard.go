package main

import (
	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/dashboard"
	"github.com/toolgate/toolgate/server"
)

// dashboardRoutes are the dashboard at / (and its run pages) with its files, and the breaker
// states it shows.
func dashboardRoutes(gw *toolgate.Gateway) []server.Mount {
	page := dashboard.Handler()
	// The same routes as dashboard.Patterns, written out for the test that
	// holds server/openapi.json to the routes registered.
	return []server.Mount{
		{Pattern: "GET /{$}", Handler: page, Public: true},
		{Pattern: "GET /runs", Handler: page, Public: true},
		{Pattern: "GET /runs/{id}", Handler: page, Public: true},
		{Pattern: "GET /assets/", Handler: page, Public: true},
		{Pattern: "GET /favicon.ico", Handler: page, Public: true},
		{Pattern: "GET /v1/breakers", Handler: dashboard.Breakers(gw.Breakers)},
	}
}
