package pipeline

import (
	"log/slog"

	"github.com/toolgate/toolgate/types"
)

func levelFor(r *types.Result) slog.Level {
	switch r.Code() {
	case types.CodeOK:
		return slog.LevelInfo
	case types.CodeInternalError:
		return slog.LevelError
	}
	if r.Meta.SideEffect == types.SideEffectUnknown {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

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
