// Package mcpcall is the executor of tools that live on MCP servers: one
// attempt is one tools/call, through the official Go SDK's client, under the
// tool's connect and read timeouts, classified like an HTTP attempt so that
// the pipeline does not know which kind it drives.
//
// A Pool holds one connection manager per MCP dependency (a streamable HTTP
// URL, or a stdio subprocess that the pool starts, restarts with backoff
// when it dies, and stops on Close). It imports the servers' tools
// (tools/list, with the effect taken from the annotations) and refreshes
// them on notifications/tools/list_changed and on a restart.
//
// What an attempt's failure proves:
//
//   - Connecting or initialising the session failed (within the connect
//     timeout): nothing was sent, so a write may be repeated safely.
//   - The tools/call request could not be written: nothing was sent either.
//     Whether it was written is known from the transport itself: the HTTP
//     request's httptrace WroteRequest, or a stdio write that returned.
//   - The request was written and no answer came within the read timeout,
//     or the connection broke after it: the outcome is unknown (a write is
//     not re-sent unless the dependency honours the operation key). The
//     SDK retires the call and sends notifications/cancelled for it, so the
//     server is told to stop and nothing waits for the late answer.
//   - isError: true is rejected, with the server's text; a JSON-RPC error
//     is rejected too (invalid params, unknown tool), or upstream_error for
//     an internal error.
//
// The operation key of a write travels in the call's _meta as
// "toolgate/operation_key" (OperationKeyMeta), so that a server which
// dedupes can use it: the same key on every attempt and every repeat.
//
// structuredContent, when present, is the answer's data, numbers exact (it
// is read from the raw JSON-RPC answer, not from the SDK's float64 decoding);
// otherwise the text content, JSON-decoded when it is JSON.
package mcpcall
