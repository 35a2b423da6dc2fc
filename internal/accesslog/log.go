package accesslog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// FlushInterval is how long a line may wait in the buffer before it is
// written out.
const FlushInterval = time.Second

// bufferSize is the buffer's size: a full buffer is written at once,
// before the interval ends.
const bufferSize = 64 << 10

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("access log closed")

// Log is a buffered writer safe for concurrent use, flushed every
// FlushInterval and at Close.
type Log struct {
	mu     sync.Mutex
	buf    *bufio.Writer
	closed bool
	failed bool // a write error was reported; the next ones are not

	file     io.Closer    // the file opened by Open, closed by Close; nil for stdout
	warn     *slog.Logger // told about the first write error
	stopTick func()
	stop     chan struct{}
	done     chan struct{}
}

// Open starts an access log appending to the file at path (created with
// mode 0600 when absent), or writing to stdout when path is "-". warn, when
// set, is told about the first error writing the log.
func Open(path string, stdout io.Writer, warn *slog.Logger) (*Log, error) {
	if path == "-" {
		t := time.NewTicker(FlushInterval)
		return start(stdout, nil, t.C, t.Stop, warn), nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("access log: %w", err)
	}
	t := time.NewTicker(FlushInterval)
	return start(f, f, t.C, t.Stop, warn), nil
}

// start makes a Log over dst flushed at each tick; stopTick (may be nil)
// stops the ticks at Close.
func start(dst io.Writer, file io.Closer, tick <-chan time.Time, stopTick func(), warn *slog.Logger) *Log {
	l := &Log{buf: bufio.NewWriterSize(dst, bufferSize), file: file, warn: warn, stopTick: stopTick,
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushEvery(tick)
	return l
}

// flushEvery flushes the buffer at each tick until Close.
func (l *Log) flushEvery(tick <-chan time.Time) {
	defer close(l.done)
	for {
		select {
		case <-tick:
			l.Flush()
		case <-l.stop:
			return
		}
	}
}

// Write adds p to the buffer (the buffer writes it out when full).
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	n, err := l.buf.Write(p)
	l.report(err)
	return n, err
}

// Flush writes out what the buffer holds.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.buf.Flush()
	l.report(err)
	return err
}

// report tells warn about the first write error; l.mu is held.
func (l *Log) report(err error) {
	if err == nil || l.failed {
		return
	}
	l.failed = true
	if l.warn != nil {
		l.warn.Error("access log: lines are being lost", "err", err)
	}
}

// Close stops the flushes, writes out what the buffer holds and closes
// the file. Writes after Close fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	if l.stopTick != nil {
		l.stopTick()
	}
	l.mu.Lock()
	err := l.buf.Flush()
	l.mu.Unlock()
	if l.file != nil {
		err = errors.Join(err, l.file.Close())
	}
	if err != nil {
		return fmt.Errorf("access log: %w", err)
	}
	return nil
}
