package main

import (
	"flag"
	"log/slog"

	"github.com/toolgate/toolgate/internal/accesslog"
)

// serveLogFlags are the flags of serve's logs.
type serveLogFlags struct {
	format, level, accessLog *string
}

func addServeLogFlags(fs *flag.FlagSet) *serveLogFlags {
	return &serveLogFlags{
		format: fs.String("log-format", "text", "log format: text or json"),
		level:  fs.String("log-level", "info", "least level logged: debug, info, warn or error"),
		accessLog: fs.String("access-log", "", "write one line per call to this file (- for stdout), buffered and written out every second and at shutdown "+
			"(default: none; the calls that need attention are logged either way)"),
	}
}

// open makes the logger of the flags on e's stderr. With --access-log, the
// per-call lines go to the access log instead (in the same format) and the
// rest, failed calls that need attention included, stays on stderr. The
// returned func writes out and closes the access log: call it once the
// server has stopped.
func (f *serveLogFlags) open(e *env) (*slog.Logger, func(), error) {
	logger, err := newLogger(e.stderr, *f.format, *f.level)
	if err != nil || *f.accessLog == "" {
		return logger, func() {}, err
	}
	al, err := accesslog.Open(*f.accessLog, e.stdout, logger)
	if err != nil {
		return nil, nil, err
	}
	access, _ := newLogger(al, *f.format, "debug") // the format was checked above
	closeLog := func() {
		if err := al.Close(); err != nil {
			logger.Error("closing the access log", "err", err)
		}
	}
	return slog.New(accesslog.Split(logger.Handler(), access.Handler())), closeLog, nil
}
