package accesslog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sink is a writer that hands each write to the test.
type sink struct{ writes chan []byte }

func newSink() *sink { return &sink{writes: make(chan []byte, 16)} }

func (s *sink) Write(p []byte) (int, error) {
	s.writes <- bytes.Clone(p)
	return len(p), nil
}

// next waits for the next write.
func (s *sink) next(t *testing.T) []byte {
	t.Helper()
	select {
	case p := <-s.writes:
		return p
	case <-time.After(time.Minute):
		t.Fatal("nothing was written within a minute")
		return nil
	}
}

// none fails if something was written.
func (s *sink) none(t *testing.T, when string) {
	t.Helper()
	select {
	case p := <-s.writes:
		t.Fatalf("%s: wrote %q", when, p)
	default:
	}
}

// A line waits in the buffer until the next tick, and no longer.
func TestLogWritesOutAtTheTick(t *testing.T) {
	dst, tick := newSink(), make(chan time.Time)
	l := start(dst, nil, tick, nil, nil)
	defer l.Close()
	l.Write([]byte("one\n"))
	l.Write([]byte("two\n"))
	dst.none(t, "before the tick")
	tick <- time.Time{}
	if got := dst.next(t); string(got) != "one\ntwo\n" {
		t.Fatalf("wrote %q at the tick, want both lines in one write", got)
	}
	tick <- time.Time{} // an empty buffer writes nothing
	l.Write([]byte("three\n"))
	tick <- time.Time{}
	if got := dst.next(t); string(got) != "three\n" {
		t.Fatalf("wrote %q at the third tick", got)
	}
}

// Close writes out what the buffer holds; later writes are refused.
func TestLogCloseWritesOut(t *testing.T) {
	dst := newSink()
	l := start(dst, nil, make(chan time.Time), nil, nil)
	l.Write([]byte("last\n"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dst.next(t); string(got) != "last\n" {
		t.Fatalf("Close wrote %q", got)
	}
	if _, err := l.Write([]byte("late\n")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close = %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("a second Close = %v", err)
	}
}

// A full buffer is written out at once, without waiting for the tick.
func TestLogWritesOutAFullBuffer(t *testing.T) {
	dst := newSink()
	l := start(dst, nil, make(chan time.Time), nil, nil)
	defer l.Close()
	l.Write(bytes.Repeat([]byte("x"), bufferSize+1))
	if got := dst.next(t); len(got) < bufferSize {
		t.Fatalf("wrote %d bytes, want the full buffer", len(got))
	}
}

// failing fails every write.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// The first write error is logged, once.
func TestLogReportsTheFirstError(t *testing.T) {
	var warned records
	l := start(failing{}, nil, make(chan time.Time), nil, slog.New(&warned))
	l.Write([]byte("a\n"))
	l.Flush()
	l.Flush()
	if err := l.Close(); err == nil {
		t.Error("Close after failed writes = nil")
	}
	if got := warned.messages(); len(got) != 1 || got[0] != "access log: lines are being lost" {
		t.Fatalf("logged %q, want one warning", got)
	}
}

// Open appends to the file and creates it readable by its owner alone.
func TestOpenAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("new\n"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "old\nnew\n" {
		t.Fatalf("file %q (%v)", data, err)
	}
	if _, err := Open(filepath.Join(path, "below-a-file"), nil, nil); err == nil {
		t.Error("Open under a file = nil error")
	}
}

// records is a slog handler that keeps the messages.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}
