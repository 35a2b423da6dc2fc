package accesslog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"
)

// callAttrs are the attributes of the pipeline's per-call line.
var callAttrs = []slog.Attr{
	slog.String("run", "read-7"), slog.Int64("step", 1234), slog.String("tool", "get_order"),
	slog.String("call_id", "call_c2712103ef4471c4"), slog.String("code", "ok"), slog.Int("attempts", 1),
	slog.Int64("elapsed_ms", 0), slog.String("side_effect", "none"), slog.Bool("replayed", false),
	slog.Bool("verified", false),
}

// pipe is a pipe whose reading end is drained, as a server's stderr is.
func pipe(b *testing.B) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	b.Cleanup(func() {
		w.Close()
		<-done
		r.Close()
	})
	return w
}

// logCall logs one call's line as the pipeline does, at level.
func logCall(ctx context.Context, log *slog.Logger, level slog.Level) {
	if log.Enabled(ctx, level) {
		log.LogAttrs(ctx, level, CallMessage, callAttrs...)
	}
}

// The per-call line's cost in each set-up: the former default (info,
// written to stderr), the new default (debug: not formatted), and the
// access log (formatted into the buffer).
func BenchmarkCallLine(b *testing.B) {
	ctx := context.Background()
	info := &slog.HandlerOptions{Level: slog.LevelInfo}
	b.Run("stderr-at-info", func(b *testing.B) {
		log := slog.New(slog.NewTextHandler(pipe(b), info))
		for b.Loop() {
			logCall(ctx, log, slog.LevelInfo)
		}
	})
	b.Run("default-debug-off", func(b *testing.B) {
		log := slog.New(slog.NewTextHandler(pipe(b), info))
		for b.Loop() {
			logCall(ctx, log, slog.LevelDebug)
		}
	})
	b.Run("access-log", func(b *testing.B) {
		tick := time.NewTicker(FlushInterval)
		al := start(pipe(b), nil, tick.C, tick.Stop, nil)
		log := slog.New(Split(slog.NewTextHandler(pipe(b), info), slog.NewTextHandler(al, &slog.HandlerOptions{Level: slog.LevelDebug})))
		for b.Loop() {
			logCall(ctx, log, slog.LevelDebug)
		}
		b.StopTimer()
		al.Close()
	})
}
