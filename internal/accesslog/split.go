package accesslog

import (
	"context"
	"errors"
	"log/slog"
)

// CallMessage is the message of the line the pipeline logs for every call
// (at debug for an ordinary outcome, warn for an unknown side effect,
// error for internal_error).
const CallMessage = "call"

// Split returns a handler that sends the records with message CallMessage
// to access (whatever their level, as access's own level allows) and every
// record base is enabled for to base: failures that are logged as calls
// reach both.
func Split(base, access slog.Handler) slog.Handler {
	return split{base: base, access: access}
}

type split struct{ base, access slog.Handler }

// Enabled is true when either handler takes the level: the message is not
// known yet.
func (s split) Enabled(ctx context.Context, l slog.Level) bool {
	return s.access.Enabled(ctx, l) || s.base.Enabled(ctx, l)
}

// Handle routes r.
func (s split) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if r.Message == CallMessage && s.access.Enabled(ctx, r.Level) {
		err = s.access.Handle(ctx, r)
	}
	if s.base.Enabled(ctx, r.Level) {
		err = errors.Join(err, s.base.Handle(ctx, r))
	}
	return err
}

// WithAttrs adds attrs to both handlers.
func (s split) WithAttrs(attrs []slog.Attr) slog.Handler {
	return split{base: s.base.WithAttrs(attrs), access: s.access.WithAttrs(attrs)}
}

// WithGroup opens the group in both handlers.
func (s split) WithGroup(name string) slog.Handler {
	return split{base: s.base.WithGroup(name), access: s.access.WithGroup(name)}
}
