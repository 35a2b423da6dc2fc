package accesslog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// Split sends every call line to the access log and leaves the operator's
// log what its level takes, calls that failed badly included.
func TestSplitRoutes(t *testing.T) {
	tests := []struct {
		name         string
		msg          string
		level        slog.Level
		base, access bool
	}{
		{"an ordinary call", CallMessage, slog.LevelDebug, false, true},
		{"an unknown side effect", CallMessage, slog.LevelWarn, true, true},
		{"an internal error", CallMessage, slog.LevelError, true, true},
		{"another message at info", "shutting down", slog.LevelInfo, true, false},
		{"another message at debug", "detail", slog.LevelDebug, false, false},
		{"a message starting like a call", "call failed", slog.LevelWarn, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base, access bytes.Buffer
			h := Split(slog.NewTextHandler(&base, &slog.HandlerOptions{Level: slog.LevelInfo}),
				slog.NewTextHandler(&access, &slog.HandlerOptions{Level: slog.LevelDebug}))
			log := slog.New(h).With("replica", "r1")
			log.Log(context.Background(), tt.level, tt.msg, "run", "run-1")
			for _, out := range []struct {
				name string
				buf  *bytes.Buffer
				want bool
			}{{"base", &base, tt.base}, {"access", &access, tt.access}} {
				got := out.buf.String()
				if (got != "") != out.want {
					t.Errorf("%s log = %q, want a line: %v", out.name, got, out.want)
				}
				if got != "" && !strings.Contains(got, "replica=r1 run=run-1") {
					t.Errorf("%s log = %q, lost the attributes", out.name, got)
				}
			}
		})
	}
}

// Without an access log at debug, an ordinary call's level is not enabled
// at all: the line is never formatted.
func TestSplitEnabled(t *testing.T) {
	info := &slog.HandlerOptions{Level: slog.LevelInfo}
	var b bytes.Buffer
	if Split(slog.NewTextHandler(&b, info), slog.NewTextHandler(&b, info)).Enabled(context.Background(), slog.LevelDebug) {
		t.Error("Enabled(debug) with both handlers at info")
	}
	if !Split(slog.NewTextHandler(&b, info), slog.NewTextHandler(&b, nil)).Enabled(context.Background(), slog.LevelInfo) {
		t.Error("Enabled(info) false with the access log at info")
	}
}
