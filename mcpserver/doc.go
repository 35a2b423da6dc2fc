// Package mcpserver serves a gateway's tools over the Model Context Protocol,
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk): on
// stdio (`toolgate mcp`, Serve) and on streamable HTTP (`/mcp` on
// `toolgate serve`, Handler). It is a thin edge: every call goes through
// the same pipeline as the HTTP API (Gateway.Do), in-process.
//
// # Tools
//
// tools/list gives the tools the session's key sees (its auth.keys[].tools
// list, narrowed by the key's pinned principal: see config.Catalogue; every
// tool without keys), each with its input_schema as inputSchema and MCP
// annotations derived from its effect (the same hints as
// `GET /v1/tools?format=mcp`, from export.Annotations):
//
//	effect      readOnlyHint  idempotentHint  destructiveHint
//	read        true          true            false
//	idempotent  false         true            true
//	write       false         false           true
//
// An idempotent tool is marked destructive: repeating it is harmless, but it
// may overwrite or delete (MCP's destructiveHint false means "only additive
// updates"). HTTP tools add openWorldHint true; Go-function tools leave it
// out (MCP's default, true, applies). A schema without "type": "object" is
// advertised with it: arguments are always an object.
//
// A tool that declares output_schema gets an outputSchema describing what
// structuredContent really holds: toolgate's result envelope, whose "data"
// follows the declared schema (or is null on a failure).
//
// # Calls
//
// A tools/call answers with the observation as its one text content, the
// whole envelope ({ok, data, error, meta, observation}) as
// structuredContent, and isError true when ok is false. Everything the
// pipeline answers is such a result, refusals included (missing_arguments,
// forbidden, timeout_unknown_outcome, ...): the model sees the observation
// and can act on it.
//
// (MCP suggests the text repeat structuredContent as JSON; toolgate sends
// the observation instead, because that is what the model should read.)
//
// JSON-RPC errors are kept for requests that are wrong as requests:
//
//	-32700 parse error       stdio: a line that is not JSON (StdioTransport
//	                         answers it and the session goes on; over HTTP
//	                         the SDK answers such a body with HTTP 400)
//	-32600 invalid request   stdio: a line that is not a JSON-RPC message
//	-32601 method not found  (the SDK)
//	-32602 invalid params    arguments that are not a JSON object; a
//	                         toolgate/... _meta value of the wrong type; a run
//	                         id that is malformed or taken by another key;
//	                         an unknown tool name (see below)
//	-32603 internal error    the store could not be read or written
//
// An unknown tool name is a protocol error in MCP, and the SDK would answer
// it before any handler runs. toolgate intercepts it first, runs it through
// the pipeline (so the call is recorded like any other, with the code
// unknown_tool) and answers -32602 whose message is toolgate's observation
// (it lists the tools the key may call, and no other) and whose data is the
// envelope. A tool outside the key's tools: list is unknown in exactly this
// way. A tool in the list that is not shown because the key's principal
// lacks its permission answers its result (forbidden) like a listed one.
//
// Each key's sessions are served by their own SDK server holding that
// key's tools, so when the configuration changes (HTTPHandler.Refresh, or
// a receive on Options.ToolsChanged for Serve) only the sessions whose list
// changed are sent notifications/tools/list_changed.
//
// # Runs
//
// Each MCP session is one run, created on its first tool call:
//
//   - its principal comes from the config's auth.keys entry of the caller:
//     on HTTP the key sent as "Authorization: Bearer KEY"; on stdio the
//     entry named by Options.Key, or the only entry when there is one. An
//     entry without a principal acts as {"id": "<key name>"}. With no keys
//     configured the principal is {"id": "mcp"} (development mode).
//   - the run is owned by that key, so `GET /v1/runs/{run}` with the same key
//     shows it. Its id is "mcp_" and a hash of the MCP session id on HTTP, or
//     a random "mcp_..." id for a session without one (stdio).
//
// On HTTP, MCP 2026-07-28 has no sessions (Handler routes each request to
// the SDK handler of its revision): a call that names no run goes to the
// key's run StatelessRunID ("mcp_stateless"), one per key.
//
// A call may name its run instead, in the request's _meta:
//
//	{"name": "issue_refund", "arguments": {...},
//	 "_meta": {"toolgate/run_id": "r1", "toolgate/call_id": "toolu_01",
//	           "toolgate/usage": {"input_tokens": 812, "output_tokens": 64}}}
//
// toolgate/run_id names a run, or the caller's key's run scoped as the HTTP
// API stores it ("KEY/ID"; another key's scope is refused). (Options.RunID, `toolgate mcp --run R`, sets a
// default for calls that name none). A run that does not exist is created
// for the caller's principal; one that belongs to another key is refused.
// toolgate/call_id is the call's id (the model's tool_use id, when the host
// knows it); without it toolgate makes a fresh "mcp_..." id (the SDK does not
// show the JSON-RPC request id to handlers, and request ids repeat across
// sessions). toolgate/usage reports the tokens of the model turn.
package mcpserver
