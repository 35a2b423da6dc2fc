package mcpcall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/types"
)

// ReadResource sends resources/read to the dependency's server under
// timeout (connecting included). A failure is classified as an attempt's
// is: a JSON-RPC error the server answered (an unknown URI) is rejected
// and leaves Failure.Err the *jsonrpc.Error, to be relayed as it is.
func (p *Pool) ReadResource(ctx context.Context, dep string, timeout time.Duration, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, *execute.Failure) {
	return request(ctx, p, dep, "resources/read", timeout, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, params)
	})
}

// GetPrompt sends prompts/get to the dependency's server, as ReadResource.
func (p *Pool) GetPrompt(ctx context.Context, dep string, timeout time.Duration, params *mcp.GetPromptParams) (*mcp.GetPromptResult, *execute.Failure) {
	return request(ctx, p, dep, "prompts/get", timeout, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, params)
	})
}

// Complete sends completion/complete to the dependency's server, as
// ReadResource.
func (p *Pool) Complete(ctx context.Context, dep string, timeout time.Duration, params *mcp.CompleteParams) (*mcp.CompleteResult, *execute.Failure) {
	return request(ctx, p, dep, "completion/complete", timeout, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return cs.Complete(ctx, params)
	})
}

// errCatalogueTimeout is the cause of a request cut by its timeout.
var errCatalogueTimeout = errors.New("import.timeout")

// request is one read request to a server: a session within the timeout,
// then the request within what is left of it.
func request[R any](ctx context.Context, p *Pool, dep, method string, timeout time.Duration, send func(context.Context, *mcp.ClientSession) (*R, error)) (*R, *execute.Failure) {
	s := p.servers[dep]
	if s == nil {
		return nil, &execute.Failure{Kind: execute.KindInvalidRequest, Code: types.CodeInternalError,
			Message: fmt.Sprintf("no MCP server named %q", dep)}
	}
	if timeout <= 0 {
		timeout = config.DefaultCatalogueTimeout
	}
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, errCatalogueTimeout)
	defer cancel()
	cs, _, err := s.session(rctx)
	if err != nil {
		return nil, connectFailure(ctx, dep, timeout, err)
	}
	res, err := send(rctx, cs)
	if err == nil {
		s.healthy()
		return res, nil
	}
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr) && werr.Code != jsonrpc2Rejected:
		f := &execute.Failure{Kind: execute.KindToolError, Delivered: true, Code: types.CodeRejected, Err: werr,
			Message: oneLine(fmt.Sprintf("%s refused %s: %s", dep, method, werr.Message))}
		if werr.Code == jsonrpc.CodeInternalError {
			f.Code, f.Transient = types.CodeUpstreamError, true
		}
		return nil, f
	case ctx.Err() != nil:
		return nil, &execute.Failure{Kind: execute.KindCanceled, Delivered: true, Code: types.CodeTimeout, Err: err,
			Message: fmt.Sprintf("the %s request to %s was cancelled (%v)", method, dep, context.Cause(ctx))}
	case errors.Is(context.Cause(rctx), errCatalogueTimeout):
		return nil, &execute.Failure{Kind: execute.KindReadTimeout, Delivered: true, Transient: true, Code: types.CodeTimeout, Err: err,
			Message: fmt.Sprintf("no answer from %s to %s within %s (the import's timeout)", dep, method, timeout)}
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		s.dropped(cs)
	}
	return nil, &execute.Failure{Kind: execute.KindReset, Delivered: true, Transient: true, Code: types.CodeUpstreamError, Err: err,
		Message: oneLine(fmt.Sprintf("%s failed %s: %v", dep, method, err))}
}
