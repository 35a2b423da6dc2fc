package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// bar shows the progress of each phase on stderr: a progress bar on a
// terminal, one line per phase otherwise. It implements soak.Progress and
// load.Progress.
type bar struct {
	w     io.Writer
	off   bool
	plain bool

	mu  sync.Mutex
	cur *progressbar.ProgressBar
}

// newBar writes to f; off shows nothing.
func newBar(f *os.File, off bool) *bar {
	return &bar{w: f, off: off, plain: !term.IsTerminal(int(f.Fd()))}
}

// Phase ends the current bar and starts one of total steps.
func (b *bar) Phase(name string, total int) {
	if b.off {
		return
	}
	if b.plain {
		fmt.Fprintf(b.w, "%s %s (%d steps)\n", time.Now().Format("15:04:05"), name, total)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finishLocked()
	b.cur = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(fmt.Sprintf("%-28s", name)),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
	)
}

// Add counts n steps of the current phase.
func (b *bar) Add(n int) {
	if b.off || b.plain {
		return
	}
	b.mu.Lock()
	cur := b.cur
	b.mu.Unlock()
	if cur != nil {
		_ = cur.Add(n)
	}
}

// Done ends the current bar.
func (b *bar) Done() {
	if b.off || b.plain {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finishLocked()
}

func (b *bar) finishLocked() {
	if b.cur != nil {
		_ = b.cur.Finish()
		fmt.Fprintln(b.w)
		b.cur = nil
	}
}
