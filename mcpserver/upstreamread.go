package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/types"
)

// The execution rows of the reads of imported resources and prompts are
// named after their MCP methods.
const (
	RowResourceRead = "resources/read"
	RowPromptGet    = "prompts/get"
	RowComplete     = "completion/complete"
)

// toolgateEvents are the server's handlers of the imported servers'
// catalogue notifications.
func toolgateEvents(s *server) toolgate.MCPEvents {
	return toolgate.MCPEvents{ResourceUpdated: s.resourceUpdated, CatalogueChanged: s.catalogueChanged}
}

// upstreamRead is one read of an imported server on behalf of a request:
// recorded in the run of the request (its _meta's toolgate/run_id, else
// the session's), under the server's breaker and its import's timeout.
// send makes the request and returns what the row records. A failure the
// server answered with a JSON-RPC error is relayed as that error; any
// other is a JSON-RPC internal error whose message is toolgate's
// observation.
func (s *server) upstreamRead(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, meta mcp.Meta,
	name, dep string, params any, send func(context.Context) (json.RawMessage, *execute.Failure)) error {
	m, err := readMeta(meta)
	if err != nil {
		return err
	}
	who, err := s.callerOf(extra)
	if err != nil {
		return err
	}
	run, err := s.runFor(ctx, ss, who, m.runID)
	if err != nil {
		return err
	}
	callID := m.callID
	if callID == "" {
		callID = "mcp_" + strings.ToLower(rand.Text()[:16])
	}
	args, _ := json.Marshal(params)
	var im *config.Import
	if d := s.view.Config().Dependencies[dep]; d != nil {
		im = d.Import
	}
	var upstream *jsonrpc.Error
	res, err := s.gw.ReadUpstream(ctx, &toolgate.UpstreamRead{RunID: run.ID, CallID: callID, Name: name, Dependency: dep, Args: args,
		Timeout: im.CatalogueTimeout(),
		Do: func(ctx context.Context) (json.RawMessage, *execute.Failure) {
			data, fail := send(ctx)
			if fail != nil && fail.Code == types.CodeRejected {
				errors.As(fail.Err, &upstream)
			}
			return data, fail
		}})
	if err != nil {
		return s.internal("recording a read of "+dep, err)
	}
	if res.OK {
		return nil
	}
	if upstream != nil {
		return upstream
	}
	res.Meta.RunID = run.PublicID()
	body, _ := json.Marshal(res)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: res.Observation, Data: body}
}

// readResource is the handler of an imported resource or template: a
// resources/read of the same URI on its server.
func (s *server) readResource(ks *keyServer, dep string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		var out *mcp.ReadResourceResult
		err := s.upstreamRead(ctx, req.Session, req.Extra, req.Params.Meta, RowResourceRead, dep, req.Params,
			func(ctx context.Context) (json.RawMessage, *execute.Failure) {
				res, fail := s.cat.pool.ReadResource(ctx, dep, 0, &mcp.ReadResourceParams{URI: req.Params.URI, Meta: passMeta(req.Params.Meta)})
				if fail != nil {
					return nil, fail
				}
				out = res
				return contentsSummary(res), nil
			})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// getPrompt is the handler of an imported prompt: a prompts/get of its
// name at its server.
func (s *server) getPrompt(ks *keyServer, dep, remote string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var out *mcp.GetPromptResult
		err := s.upstreamRead(ctx, req.Session, req.Extra, req.Params.Meta, RowPromptGet, dep, req.Params,
			func(ctx context.Context) (json.RawMessage, *execute.Failure) {
				res, fail := s.cat.pool.GetPrompt(ctx, dep, 0, &mcp.GetPromptParams{Name: remote, Arguments: req.Params.Arguments, Meta: passMeta(req.Params.Meta)})
				if fail != nil {
					return nil, fail
				}
				out = res
				b, _ := json.Marshal(map[string]any{"prompt": remote, "messages": len(res.Messages)})
				return b, nil
			})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// complete is the completion/complete handler of a key's server: the
// reference must be a prompt or a resource template the key sees; the
// request goes to its server under the name it has there.
func (s *server) complete(key string) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		ref := req.Params.Ref
		it, ok := s.servedItem(key, ref)
		if !ok {
			return nil, invalidParams("no prompt or resource template %q is served to this key (see prompts/list and resources/templates/list)", ref.Name+ref.URI)
		}
		params := *req.Params
		r := *ref
		if r.Type == "ref/prompt" {
			r.Name = it.remote
		}
		params.Ref, params.Meta = &r, passMeta(req.Params.Meta)
		var out *mcp.CompleteResult
		err := s.upstreamRead(ctx, req.Session, req.Extra, req.Params.Meta, RowComplete, it.dep, req.Params,
			func(ctx context.Context) (json.RawMessage, *execute.Failure) {
				res, fail := s.cat.pool.Complete(ctx, it.dep, 0, &params)
				if fail != nil {
					return nil, fail
				}
				out = res
				b, _ := json.Marshal(res.Completion)
				return b, nil
			})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// servedItem finds what a completion reference names among the key's
// prompts and resource templates (or resources).
func (s *server) servedItem(key string, ref *mcp.CompleteReference) (servedItem, bool) {
	ks := s.serverFor(key)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ref == nil || ks.cat == nil {
		return servedItem{}, false
	}
	switch ref.Type {
	case "ref/prompt":
		it, ok := ks.cat.prompts[ref.Name]
		return it, ok
	case "ref/resource":
		if it, ok := ks.cat.templates[ref.URI]; ok {
			return it, true
		}
		it, ok := ks.cat.resources[ref.URI]
		return it, ok
	}
	return servedItem{}, false
}

// subscribe relays resources/subscribe of a resource the key sees (listed,
// or matching a template it sees) to its server, once per session and URI.
func (s *server) subscribe(key string) func(context.Context, *mcp.SubscribeRequest) error {
	return func(ctx context.Context, req *mcp.SubscribeRequest) error {
		dep, ok := s.resourceDep(key, req.Params.URI)
		if !ok {
			return mcp.ResourceNotFoundError(req.Params.URI)
		}
		s.cat.mu.Lock()
		mine := s.cat.subs[req.Session]
		_, already := mine[req.Params.URI]
		s.cat.mu.Unlock()
		if already {
			return nil
		}
		if err := s.cat.pool.Subscribe(ctx, dep, req.Params.URI); err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				return werr
			}
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "toolgate could not subscribe to " + req.Params.URI + " on " + dep + ": " + err.Error()}
		}
		s.cat.mu.Lock()
		if s.cat.subs[req.Session] == nil {
			s.cat.subs[req.Session] = map[string]string{}
		}
		s.cat.subs[req.Session][req.Params.URI] = dep
		s.cat.mu.Unlock()
		return nil
	}
}

// unsubscribe relays resources/unsubscribe of the session's subscription.
func (s *server) unsubscribe(string) func(context.Context, *mcp.UnsubscribeRequest) error {
	return func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
		s.cat.mu.Lock()
		dep, ok := s.cat.subs[req.Session][req.Params.URI]
		if ok {
			delete(s.cat.subs[req.Session], req.Params.URI)
			if len(s.cat.subs[req.Session]) == 0 {
				delete(s.cat.subs, req.Session)
			}
		}
		s.cat.mu.Unlock()
		if !ok {
			return nil
		}
		if err := s.cat.pool.Unsubscribe(ctx, dep, req.Params.URI); err != nil {
			s.log.Warn("unsubscribing from an MCP resource failed", "dependency", dep, "uri", req.Params.URI, "err", err)
		}
		return nil
	}
}

// resourceDep is the server of a resource the key sees: listed with that
// URI, or matching one of its templates.
func (s *server) resourceDep(key, uri string) (string, bool) {
	ks := s.serverFor(key)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.cat == nil {
		return "", false
	}
	if it, ok := ks.cat.resources[uri]; ok {
		return it.dep, true
	}
	for _, it := range sortedItems(ks.cat.templates) {
		if templateMatches(it.template.URITemplate, uri) {
			return it.dep, true
		}
	}
	return "", false
}

// passMeta is the part of a request's _meta that goes on to the server:
// everything but toolgate's own keys and the protocol's reserved ones
// (io.modelcontextprotocol/...: a 2026-07-28 client's revision and
// capabilities, which are not those of toolgate's session with the
// server).
func passMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, "toolgate/") || reservedMeta(k) {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

// contentsSummary is what the execution row of a resources/read records:
// each content's URI, MIME type and size, not the content itself.
func contentsSummary(res *mcp.ReadResourceResult) json.RawMessage {
	type part struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Bytes    int    `json:"bytes"`
	}
	parts := make([]part, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		parts = append(parts, part{URI: c.URI, MIMEType: c.MIMEType, Bytes: len(c.Text) + len(c.Blob)})
	}
	b, _ := json.Marshal(map[string]any{"contents": parts})
	return b
}

// templateMatches reports whether uri is an expansion of the URI template
// (RFC 6570), as the SDK matches a resources/read to a template.
func templateMatches(template, uri string) bool {
	t, err := uritemplate.New(template)
	return err == nil && t.Regexp().MatchString(uri)
}

// sortedItems are the items of a map in the order of their keys.
func sortedItems(m map[string]servedItem) []servedItem {
	out := make([]servedItem, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// reservedMeta reports whether a _meta key's prefix is reserved by MCP: a
// label of it is modelcontextprotocol or mcp.
func reservedMeta(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	for _, label := range strings.Split(prefix, ".") {
		if label == "modelcontextprotocol" || label == "mcp" {
			return true
		}
	}
	return false
}
