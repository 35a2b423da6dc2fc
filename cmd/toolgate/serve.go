package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/server"
)

// exitNow ends the process on a second signal.
var exitNow = os.Exit

// runServe wires `toolgate serve` in one place, in this order: the
// monitoring (store, stats, metrics, traces), the gateway on its store and
// sinks, the MCP endpoint, then the server with the API's own routes (runs,
// calls, executions, tools, approvals, quotas, config, openapi, healthz)
// and the routes of each subsystem; then it listens until ctx ends. The
// deferred closes run in reverse: MCP sessions, gateway, monitoring.
func runServe(ctx context.Context, e *env, args []string) error {
	sf, err := parseServeFlags(e, args)
	if err != nil {
		return err
	}
	logger, closeAccessLog, err := sf.log.open(e)
	if err != nil {
		return err
	}
	defer closeAccessLog()
	tuneGC(e.getenv)
	cfg, err := config.Load(sf.path)
	if err != nil {
		return err
	}
	if sf.leaseMargin < 0 {
		return fmt.Errorf("%w: --lease-margin %s: must not be negative", errUsage, sf.leaseMargin)
	}

	mon, err := openMonitoring(ctx, cfg, e.stdout, logger)
	if err != nil {
		return err
	}
	defer mon.close(context.WithoutCancel(ctx), logger)
	gw, err := toolgate.Open(ctx, mon.gatewayOptions(toolgate.Options{Config: cfg, Logger: logger, LeaseMargin: sf.leaseMargin}))
	if err != nil {
		return err
	}
	defer gw.Close()
	mon.attach(gw)
	mcp := openMCPEndpoint(ctx, gw, logger)
	defer mcp.close()
	srv, err := server.New(server.Options{Gateway: gw, Logger: logger, ShutdownTimeout: sf.shutdown,
		Mounts: slices.Concat(mon.routes(cfg.MetricsListen == ""), dashboardRoutes(gw), mcp.routes())})
	if err != nil {
		return err
	}
	if cfg.MetricsListen != "" {
		stop, err := mon.serveMetrics(cfg.MetricsListen, e.stderr, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	addr := sf.listen
	if addr == "" {
		addr = cfg.Listen
	}
	ln, err := listenOn(srv, addr)
	if err != nil {
		return err
	}
	defer exitOnSecondSignal(logger)()
	defer watchReload(gw, sf.path, logger, mon.reloaded)()
	fmt.Fprintf(e.stderr, "toolgate listening on http://%s\n", ln.Addr())
	return srv.Serve(ctx, ln)
}

// serveFlags are the flags of toolgate serve.
type serveFlags struct {
	path, listen          string
	log                   *serveLogFlags
	shutdown, leaseMargin time.Duration
}

// parseServeFlags parses the flags of toolgate serve, which takes no
// arguments.
func parseServeFlags(e *env, args []string) (*serveFlags, error) {
	fs := flags(e, "serve", "[--config FILE] [--listen ADDR] [--log-format text|json] [--log-level LEVEL] [--access-log FILE|-] [--shutdown-timeout D] [--lease-margin D]",
		"toolgate serve --config toolgate.yaml\ntoolgate serve --config toolgate.yaml --listen 127.0.0.1:0 --log-format json")
	sf := &serveFlags{}
	fs.StringVar(&sf.path, "config", "toolgate.yaml", "the config file")
	fs.StringVar(&sf.listen, "listen", "", "address to listen on (default: the config's listen, 127.0.0.1:8470; port 0 picks a free port)")
	sf.log = addServeLogFlags(fs)
	fs.DurationVar(&sf.shutdown, "shutdown-timeout", server.DefaultShutdownTimeout,
		"on SIGTERM, how long calls in flight may take to finish (a second SIGTERM exits at once)")
	fs.DurationVar(&sf.leaseMargin, "lease-margin", 0,
		"added to a write's deadline to make its lease in the ledger; after it other replicas take the operation for unknown. Must exceed the clock skew between replicas (default 30s)")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return sf, nil
}

// listenOn listens on addr once the server has accepted it: without keys
// only a loopback address is allowed, checked before and after listening.
func listenOn(srv *server.Server, addr string) (net.Listener, error) {
	if err := srv.CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := srv.CheckListener(ln); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// newLogger makes the slog logger of --log-format and --log-level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: use debug, info, warn or error", errUsage, level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: use text or json", errUsage, format)
}

// exitOnSecondSignal exits the process at once when a second SIGTERM or
// interrupt arrives (the first one starts the graceful shutdown through
// the command's context). The returned func stops watching.
func exitOnSecondSignal(log *slog.Logger) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		seen := 0
		for {
			select {
			case <-sigs:
				if seen++; seen == 2 {
					log.Error("second signal: exiting at once; calls still in flight are settled by crash recovery at the next start")
					exitNow(1)
					return
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// serveGCPercent is the server's GOGC unless the environment sets one: its
// live heap is small (a few MB of caches and buffers) while it allocates
// for every call, so the default 100 collects very often; 400 spends a
// little memory on a quarter of the collections.
const serveGCPercent = 400

// tuneGC sets the garbage collector's target for a server, unless GOGC is
// set in the environment.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}
