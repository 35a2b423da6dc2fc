package main

// commands is every subcommand, in the order `toolgate help` lists them
// (by name). A new subcommand gets its line here and a run function of its
// own file; nothing registers itself.
func commands() []command {
	return []command{
		{name: "approvals", summary: "list pending approvals, approve or deny one", run: runApprovals},
		{name: "backup", summary: "copy the SQLite store consistently while toolgate serves from it", run: runBackup},
		{name: "call", summary: "run one tool call from the shell and print its result envelope (no server needed)", run: runCall},
		{name: "check", summary: "validate a config and list every problem in it", run: runCheck},
		{name: "demo", summary: "replay the refund incident: a naive retry loop vs toolgate", run: runDemo},
		{name: "executions", summary: "export the execution rows (the audit trail) as JSON lines or CSV", run: runExecutions},
		{name: "mcp", summary: "serve the tools over MCP on stdin/stdout (for MCP hosts)", run: runMCP},
		{name: "migrate", summary: "list the store's applied and pending schema migrations (--status), or apply them", run: runMigrate},
		{name: "prune", summary: "delete old executions and completed operations (never started or unknown ones)", run: runPrune},
		{name: "reconcile", summary: "settle every operation whose outcome is unknown by its verify read", run: runReconcile},
		{name: "reload", summary: "send SIGHUP to the serving toolgate so that it reloads its config", run: runReload},
		{name: "replay", summary: "rebuild a run's state from its log and say whether it matches (exit 1 if not)", run: runReplay},
		{name: "runs", summary: "list the runs (newest first), or show one: its principal, state and history as a timeline", run: runRuns},
		{name: "serve", summary: "run the HTTP API until SIGTERM (then finish the calls in flight); SIGHUP reloads the config", run: runServe},
		{name: "sim", summary: "run a simulated dependency (the payments provider) for examples and trials", run: runSim},
		{name: "stats", summary: "per-tool calls, error and retry rates, latency percentiles and timeout advice", run: runStats},
		{name: "tools", summary: "print the tool list for OpenAI, Anthropic or MCP", run: runTools},
		{name: "version", summary: "print the version, commit, build date and Go version", run: runVersion},
		{name: "whatif", summary: "re-judge recorded calls under another config (offline; nothing is executed)", run: runWhatif},
	}
}

// lookup finds the subcommand called name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
