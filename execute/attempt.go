package execute

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/toolgate/toolgate/config"
)

// Attempt is one try of a call against its dependency.
type Attempt struct {
	// Tool is the tool being called.
	Tool *config.Tool
	// Dependency is the service an HTTP tool talks to; nil for Go-function
	// tools.
	Dependency *config.Dependency
	// Args are the decoded arguments, numbers as json.Number so that they
	// pass through exactly.
	Args map[string]any
	// OperationKey is the operation's identity, the same on every attempt. It
	// is sent in Tool.Idempotency.Header when that is set.
	OperationKey string
	// Canonical, when set, is Args already encoded as canonical JSON: a Go
	// tool gets it as is instead of an encoding made again.
	Canonical json.RawMessage
}

// Response is a successful attempt's answer.
type Response struct {
	// Status is the HTTP status (200 for Go-function tools).
	Status int
	// Header is the response's header (nil for Go-function tools).
	Header http.Header
	// Data is the body if it is valid JSON, else the body as a JSON string;
	// "null" for an empty body. JSON nested deeper than MaxDataDepth is
	// carried as a string too, and DataDepth says how deep it was.
	Data json.RawMessage
	// DataDepth, when not zero, is the nesting depth of a JSON answer
	// deeper than MaxDataDepth, which Data carries as a string.
	DataDepth int
	// Content is the content blocks of an MCP tool's answer as the server
	// sent them (a JSON array), when it sent any; nil for other tools.
	Content json.RawMessage
	// Note, when set, is a sentence for the call's observation (and so
	// its execution row) about the attempt: e.g. that the MCP server asked
	// the caller's client a question, and the action taken.
	Note string
}

// Executor runs ONE attempt. It never retries by itself. Exactly one of the
// results is non-nil.
type Executor interface {
	Do(ctx context.Context, a *Attempt) (*Response, *Failure)
}

// Router is the Executor of a gateway: it runs Go-function tools with Funcs,
// the tools of MCP servers with MCP, and every other tool with HTTP.
type Router struct {
	// HTTP runs HTTP tools. It must be set if any tool is an HTTP tool.
	HTTP *HTTP
	// Funcs runs Go-function tools.
	Funcs Funcs
	// MCP runs the tools of dependencies with an mcp: section (package
	// execute/mcpcall). It must be set if any tool is an MCP tool.
	MCP Executor
}

var (
	_ Executor = Router{}
	_ Executor = (*HTTP)(nil)
	_ Executor = Funcs{}
)

// Do dispatches on a.Tool.Func: set, it is a Go-function tool.
func (r Router) Do(ctx context.Context, a *Attempt) (*Response, *Failure) {
	if a.Tool != nil && a.Tool.Func != nil {
		return r.Funcs.Do(ctx, a)
	}
	if a.Dependency != nil && a.Dependency.MCP != nil {
		if r.MCP == nil {
			return nil, invalidRequest(a, "no MCP executor is configured")
		}
		return r.MCP.Do(ctx, a)
	}
	if r.HTTP == nil {
		return nil, invalidRequest(a, "no HTTP executor is configured")
	}
	return r.HTTP.Do(ctx, a)
}
