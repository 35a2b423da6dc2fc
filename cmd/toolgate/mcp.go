package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/server"
)

// mcpEndpoint is /mcp (MCP over streamable HTTP) on `toolgate serve`. The
// server's auth runs first; the MCP handler then binds each session to its
// key. When the serve context ends (shutdown) the sessions' standing
// streams end, so the graceful shutdown waits only for calls in flight.
type mcpEndpoint struct {
	handler   *mcpserver.HTTPHandler
	stop      func() bool
	publicURL string // the config's public_url, without a trailing slash
}

// openMCPEndpoint makes the endpoint, whose sessions close when ctx ends.
func openMCPEndpoint(ctx context.Context, gw *toolgate.Gateway, log *slog.Logger) *mcpEndpoint {
	h := mcpserver.Handler(gw, mcpserver.Options{Logger: log})
	return &mcpEndpoint{handler: h, stop: context.AfterFunc(ctx, h.Close),
		publicURL: strings.TrimSuffix(gw.Config().PublicURL, "/")}
}

// routes are /mcp and the protected-resource metadata (RFC 9728) its 401
// points to: bearer keys in the header, no OAuth authorization server.
// Both name URLs under the config's public_url when it is set.
func (m *mcpEndpoint) routes() []server.Mount {
	md := mcpserver.ResourceMetadataHandler(m.publicURL, "/mcp")
	metadata := mcpserver.ResourceMetadataPath + "/mcp"
	if m.publicURL != "" {
		metadata = m.publicURL + metadata
	}
	return []server.Mount{
		{Pattern: "/mcp", Handler: m.handler, ResourceMetadata: metadata},
		{Pattern: "GET /.well-known/oauth-protected-resource/mcp", Handler: md, Public: true},
		{Pattern: "GET /.well-known/oauth-protected-resource", Handler: md, Public: true}, // mcpserver.ResourceMetadataPath
	}
}

// close ends the sessions that are left, once the server has drained.
func (m *mcpEndpoint) close() {
	m.stop()
	m.handler.CloseSessions()
}

// runMCP serves one MCP session on stdin/stdout. stdout carries protocol
// messages only; logs go to stderr.
func runMCP(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "mcp", "--config FILE [--run R] [--key NAME] [--store URL]",
		"toolgate mcp --config toolgate.yaml\n\n"+
			"An MCP host's server entry (e.g. claude_desktop_config.json):\n"+
			`  {"command": "toolgate", "args": ["mcp", "--config", "/path/to/toolgate.yaml"]}`)
	path := fs.String("config", "toolgate.yaml", "the config file")
	run := fs.String("run", "", "the run of every call that names none in its _meta (created on first use; default: a new run for the session)")
	key := fs.String("key", "", "the auth.keys entry whose principal the runs act for (default: the only one; with no keys, the principal {\"id\": \"mcp\"})")
	storeURL := fs.String("store", "", "the store, overriding the config's (memory, sqlite:PATH relative to the config file, postgres://...)")
	if err := noPositional(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	if *storeURL != "" {
		cfg.Store = *storeURL
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))
	tel, err := openMCPTelemetry(ctx, cfg, e.stderr, logger)
	if err != nil {
		return err
	}
	defer tel.close(context.WithoutCancel(ctx), logger)
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Store: tel.store, Owner: tel.owner, Logger: logger,
		Sinks: []toolgate.Sink{tel.agg}, Tracer: tel.tracer})
	if err != nil {
		return err
	}
	defer gw.Close()
	t := mcpserver.StdioTransport(io.NopCloser(e.stdin), e.stdout)
	err = mcpserver.Serve(ctx, gw, mcpserver.Options{Key: *key, RunID: *run, Logger: logger}, t)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil // stopped by a signal: the calls in flight have finished
	}
	return err
}
