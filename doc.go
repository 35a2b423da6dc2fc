// Package toolgate is the safe path between "the model asked for a tool" and
// "the observation goes back into the trace", as a Go library.
//
// A Gateway validates each call, executes it with per-phase timeouts, an
// operation key, a circuit breaker and safe retries, normalises the result
// into one envelope, writes an observation the model can act on, records one
// execution row, and updates the run's state atomically. The same pipeline
// backs the toolgate server, its MCP endpoint and its command line.
//
// Tools are declared in a toolgate.yaml (HTTP tools) or in Go (Func tools),
// or both:
//
//	cfg, _ := config.Load("toolgate.yaml")
//	cfg.Tools["lookup_weather"] = &config.Tool{Description: "...", Effect: "read", Func: weather}
//	gw, _ := toolgate.Open(ctx, toolgate.Options{Config: cfg})
//	run, _ := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
//	res, _ := gw.Call(ctx, run.ID, "lookup_weather", map[string]any{"city": "Pune"})
//
// This package is the Gateway (toolgate.go) and its options and names
// (options.go); the work is done by the packages it composes: pipeline (the
// stages of a call), toolsource (the tools imported from MCP servers and
// OpenAPI documents), reload (the reload controller) and store (the
// records), see docs/library.md.
package toolgate
