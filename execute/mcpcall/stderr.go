package mcpcall

import (
	"io"
	"log/slog"
	"sync"
)

// maxStderrBytes bounds what one run of a stdio server may write to
// toolgate's stderr (Options.Stderr); the rest is read and dropped, so
// that the server never blocks on a full pipe, and one warning says so.
const maxStderrBytes = 1 << 20

// cappedStderr passes at most maxStderrBytes of one process's stderr on.
type cappedStderr struct {
	w    io.Writer
	log  *slog.Logger
	dep  string
	mu   sync.Mutex
	left int
	lost int64
}

func newCappedStderr(w io.Writer, log *slog.Logger, dep string) *cappedStderr {
	return &cappedStderr{w: w, log: log, dep: dep, left: maxStderrBytes}
}

// Write passes p on while the budget lasts and always reports it written.
func (c *cappedStderr) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := min(len(p), c.left)
	if keep > 0 {
		c.w.Write(p[:keep]) //nolint:errcheck // stderr is best effort
		c.left -= keep
	}
	if keep < len(p) {
		if c.lost == 0 {
			c.log.Warn("the MCP server wrote more than the stderr limit; dropping the rest of its stderr until it restarts",
				"dependency", c.dep, "limit_bytes", maxStderrBytes)
		}
		c.lost += int64(len(p) - keep)
	}
	return len(p), nil
}
