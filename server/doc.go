// Package server is toolgate's HTTP API (docs/http-api.md) on
// net/http: it translates requests into Gateway calls and results into
// JSON, and holds no pipeline logic of its own.
//
// Routes of the server itself (Options.Mounts adds the others):
//
//	POST /v1/runs                   create a run                   201, 409 run_exists
//	GET  /v1/runs                   the caller's runs, newest first 200, paged by next_cursor
//	POST /v1/runs/{run}/calls       one tool call                  200 with the result envelope
//	GET  /v1/runs/{run}             the run and its history (?key=: another key's run, approver keys)  200
//	GET  /v1/runs/{run}/replay      state rebuilt from the log     200
//	GET  /v1/executions             monitoring rows, newest first, paged (run, tool, code, since, until, limit, cursor)
//	GET  /v1/tools                  the tool list (?format=openai, anthropic, mcp)
//	GET  /v1/approvals              approval requests (?status=pending|approved|denied|all, limit)
//	GET  /v1/approvals/{id}         one approval request
//	POST /v1/approvals/{id}         approve or deny it (approver keys only)
//	GET  /v1/quotas                 each quota key's use inside its window
//	GET  /v1/summary                the console's headline figures (?window=)
//	GET  /v1/config                 the live config's version, file, load time, last reload
//	GET  /v1/openapi.json           the OpenAPI 3.1 document of this API (no auth)
//	GET  /healthz                   200 when the store answers, else 503 (no auth)
//
// Routes that `toolgate serve` mounts beside them:
//
//	GET  /v1/stats                  per-tool figures over a window (?window=)
//	GET  /v1/stats/series           one tool's figures per step (?tool=, window=)
//	GET  /v1/alerts                 the alerts firing now
//	GET  /v1/breakers               this replica's circuit breakers
//	GET  /metrics                   Prometheus metrics (no auth)
//	ANY  /mcp                       MCP over streamable HTTP (POST, GET, DELETE)
//	GET  /.well-known/oauth-protected-resource      how /mcp takes its bearer keys (RFC 9728; no auth)
//	GET  /.well-known/oauth-protected-resource/mcp  the same, at the path-suffixed name clients try first
//	GET  /                          the dashboard (no auth)
//	GET  /runs                      the dashboard's runs list (the same page; no auth)
//	GET  /runs/{id}                 the dashboard's page of one run (the same page; no auth)
//	GET  /assets/                   the dashboard's files (no auth)
//	GET  /favicon.ico               the dashboard's icon (no auth)
//
// A tool's failure is not an HTTP failure: a call answers 200 with ok false.
// The gateway's own refusals (bad JSON, unknown run, auth, limits) answer
// 4xx/5xx with the same envelope, error.code one of the gateway codes of
// package types, a message naming the problem and an observation saying
// what to do.
//
// Auth: with keys configured every route but the public ones needs
// "Authorization: Bearer KEY"; a run belongs to the key that created it and
// is invisible (404) to the others. Without keys the server runs in
// development mode and Serve refuses any address that is not loopback.
//
// Limits: request bodies (config max_body_bytes, default 1 MiB), JSON
// nesting (64 levels, checked on the bytes before anything is decoded),
// strict decoding (unknown fields are named in a 400), a read deadline on
// bodies, ReadHeaderTimeout and IdleTimeout on the server, and a
// WriteTimeout longer than the slowest configured tool call (a call of a
// tool a reload made slower gets its own, longer write deadline).
//
// Other packages add routes through Options.Mounts and read the caller's
// key name with KeyName.
package server
