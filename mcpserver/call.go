package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/internal/tracectx"
	"github.com/toolgate/toolgate/types"
)

// The _meta keys a tools/call may carry.
const (
	// MetaRunID names the run of the call (a string).
	MetaRunID = "toolgate/run_id"
	// MetaCallID is the call's id, e.g. the model's tool_use id (a string).
	MetaCallID = "toolgate/call_id"
	// MetaUsage is the token cost of the model turn:
	// {"input_tokens": n, "output_tokens": n}.
	MetaUsage = "toolgate/usage"
)

// MaxCallIDBytes bounds a call id sent in _meta.
const MaxCallIDBytes = 256

// MaxToolNameBytes bounds the tool a tools/call names, as on the HTTP API:
// no configured tool has a longer name.
const MaxToolNameBytes = 128

// callTool is the handler of every configured tool: one call through the
// pipeline, its envelope as the result.
func (s *server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := s.do(ctx, req)
	if err != nil {
		return nil, err
	}
	return toolResult(res)
}

// toolResult is a call's envelope as a tools/call result: the observation
// as its first text, then every content block of an MCP upstream's answer
// as the upstream sent it; the envelope as structuredContent, without its
// content (the blocks are in content already).
func toolResult(res *types.Result) (*mcp.CallToolResult, error) {
	env := *res
	env.Content = nil
	body, err := json.Marshal(&env)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "toolgate: encoding the result: " + err.Error()}
	}
	return &mcp.CallToolResult{
		Content:           append([]mcp.Content{&mcp.TextContent{Text: res.Observation}}, upstreamContent(res.Content)...),
		StructuredContent: json.RawMessage(body),
		IsError:           !res.OK,
	}, nil
}

// unknownTools is receiving middleware that answers a tools/call of a tool
// the key's server does not list before the SDK does: the call goes through
// the pipeline (recorded). When the pipeline finds no such tool for the
// run's key (code unknown_tool) the answer is the JSON-RPC error MCP
// prescribes, carrying toolgate's observation and envelope; a tool the key
// may call but is not shown (its pinned principal lacks the permission)
// answers the pipeline's result (forbidden) like any listed tool.
func (s *server) unknownTools(ks *keyServer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, r mcp.Request) (mcp.Result, error) {
			req, ok := r.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || req.Params == nil || ks.has(req.Params.Name) {
				return next(ctx, method, r)
			}
			res, err := s.do(ctx, req)
			if err != nil {
				return nil, err
			}
			if res.Code() != types.CodeUnknownTool {
				return toolResult(res)
			}
			body, _ := json.Marshal(res)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: res.Observation, Data: body}
		}
	}
}

// do turns a tools/call into a pipeline call and runs it. Its error is a
// JSON-RPC error: the request was wrong, or the store failed; a store that
// did not answer in time is a result (store_unavailable), like the
// pipeline's.
func (s *server) do(ctx context.Context, req *mcp.CallToolRequest) (*types.Result, error) {
	p := req.Params
	if len(p.Name) > MaxToolNameBytes {
		return nil, invalidParams("the tool name is %d bytes long; no tool's name is longer than %d (see tools/list)", len(p.Name), MaxToolNameBytes)
	}
	args, err := arguments(p.Arguments)
	if err != nil {
		return nil, err
	}
	m, err := readMeta(p.Meta)
	if err != nil {
		return nil, err
	}
	who, err := s.caller(req)
	if err != nil {
		return nil, err
	}
	run, err := s.runFor(ctx, req.Session, who, m.runID)
	if errors.Is(err, errStoreBusy) {
		return storeBusyResult(p.Name, m.runID), nil
	}
	if err != nil {
		return nil, err
	}
	callID := m.callID
	if callID == "" {
		callID = "mcp_" + strings.ToLower(rand.Text()[:16])
	}
	// The call's span is the child of the traceparent in _meta, if any.
	ctx = tracectx.FromMeta(ctx, p.Meta)
	// An MCP upstream's progress, logging and questions during the call
	// are relayed to this session (execute/mcpcall).
	if req.Session != nil {
		ctx = mcpcall.WithCaller(ctx, &mcpcall.Caller{Session: req.Session, ProgressToken: p.GetProgressToken()})
	}
	res, err := s.gw.Do(ctx, &types.Call{RunID: run.ID, Tool: p.Name, Args: args, CallID: callID, Usage: m.usage})
	if err != nil {
		return nil, s.internal("running the call", err)
	}
	res.Meta.RunID = run.PublicID()
	return res, nil
}

// arguments checks that a call's arguments are a JSON object (absent or
// null: none) and keeps them byte for byte, so numbers stay exact.
func arguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' {
		return nil, invalidParams("arguments must be a JSON object of named arguments, got %s", types.JSONKind(raw))
	}
	return raw, nil
}

// callMeta is what a call's _meta says to toolgate.
type callMeta struct {
	runID  string
	callID string
	usage  types.Usage
}

func readMeta(m mcp.Meta) (callMeta, error) {
	var out callMeta
	var err error
	if out.runID, err = metaString(m, MetaRunID); err != nil {
		return out, err
	}
	if out.runID != "" && !validRunID(out.runID) {
		return out, invalidParams("_meta %q is %q: a run id is 1 to 128 letters, digits and . _ : - (starting with a letter or digit)", MetaRunID, out.runID)
	}
	if out.callID, err = metaString(m, MetaCallID); err != nil {
		return out, err
	}
	if len(out.callID) > MaxCallIDBytes {
		return out, invalidParams("_meta %q is %d bytes long; the limit is %d", MetaCallID, len(out.callID), MaxCallIDBytes)
	}
	if u, ok := m[MetaUsage]; ok && u != nil {
		b, _ := json.Marshal(u)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out.usage); err != nil || out.usage.InputTokens < 0 || out.usage.OutputTokens < 0 {
			return out, invalidParams(`_meta %q must be {"input_tokens": n, "output_tokens": n} with whole numbers n >= 0`, MetaUsage)
		}
	}
	return out, nil
}

func metaString(m mcp.Meta, key string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalidParams("_meta %q must be a string, got %T", key, v)
	}
	return s, nil
}

func invalidParams(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// internal logs a store failure and answers a JSON-RPC internal error that
// does not repeat its details.
func (s *server) internal(what string, err error) error {
	s.log.Error("mcp: "+what, "error", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "toolgate could not reach its store while " + what + "; try again later"}
}
