package pipeline

import (
	"log/slog"

	"github.com/toolgate/toolgate/types"
)

// levelFor is the level of a call's line. An ordinary outcome, refusals
// and dependency failures included, is at debug: the execution row already
// records it, and a line per call on the operator's log would cost a
// formatted write on every call (`toolgate serve --access-log` keeps one
// line per call, buffered). What the operator must see stays above it: an
// internal_error at error, an unknown side effect at warn.
func levelFor(r *types.Result) slog.Level {
	switch r.Code() {
	case types.CodeOK:
		return slog.LevelDebug
	case types.CodeInternalError:
		return slog.LevelError
	}
	if r.Meta.SideEffect == types.SideEffectUnknown {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// slogAttrs are the attributes of a call's line.
func slogAttrs(r *types.Result) []slog.Attr {
	return []slog.Attr{
		slog.String("run", r.Meta.RunID),
		slog.Int64("step", r.Meta.Step),
		slog.String("tool", r.Meta.Tool),
		slog.String("call_id", r.Meta.CallID),
		slog.String("code", string(r.Code())),
		slog.Int("attempts", r.Meta.Attempts),
		slog.Int64("elapsed_ms", r.Meta.ElapsedMS),
		slog.String("side_effect", string(r.Meta.SideEffect)),
		slog.Bool("replayed", r.Meta.Replayed),
		slog.Bool("verified", r.Meta.Verified),
	}
}
