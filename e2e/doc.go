// Package e2e holds the whole-binary end-to-end tests of toolgate: they
// build the real binary once, start `toolgate serve` (or run a command)
// against a simulated payment provider on 127.0.0.1, and check what an
// operator or an agent host sees.
//
// The files go by concern:
//
//   - e2e_test.go, executions_test.go, security_test.go: every endpoint and
//     every error code reachable over HTTP, bad input, odd answers;
//   - catalogue_test.go, tenancy_test.go, monitoring_test.go: keys and their
//     catalogues, runs per key, approvals, metrics and the dashboard;
//   - sigterm_test.go, reload_test.go, accesslog_test.go: SIGTERM during
//     calls in flight, SIGHUP reloads, the access log;
//   - crash_test.go (with crash_restart, crash_check, crash_provider): the
//     SIGKILL crash test on one SQLite file;
//   - faults_*_test.go: dependency, disk and PostgreSQL faults;
//   - replicas_*, failover_*, limits_test.go, admission_test.go: replicas on
//     one PostgreSQL database, failover, state rules and quotas across them;
//   - openapi_test.go, mcp_upstream_test.go: tools imported from OpenAPI and
//     MCP servers;
//   - main_test.go, provider_test.go: the binary, its processes and the
//     simulated provider.
//
// The package has no code of its own; everything is in its tests.
package e2e
