// Package toolsource holds a gateway's tool sources: the MCP servers and
// OpenAPI documents that the config imports tools from
// (docs/mcp-upstreams.md, docs/openapi.md).
//
// At Open it reads the OpenAPI documents (package toolsource/openapi),
// connects to the MCP servers (package execute/mcpcall), lists their tools
// and merges them into the config (config.Config.Imported). While the
// gateway runs it merges an MCP server's refreshed list
// (notifications/tools/list_changed, a stdio restart) and swaps the
// pipeline's tools, fans the servers' catalogue notifications out to the
// edges, and, on a reload, merges the new config's overrides into the lists
// it holds, refusing a reload that adds, removes or changes an MCP server.
//
// It knows the pipeline only as functions it is given (Bind, Reload's
// apply): the gateway (the root package) imports it, never the reverse.
package toolsource
