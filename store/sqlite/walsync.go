package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// walSync makes durable the batches the writer commits with
// synchronous=NORMAL: it fsyncs the WAL file and then answers the callers
// of every batch that was committed before that fsync began. Meanwhile the
// writer runs the next batch, so that the writer's CPU and the disk's
// flush overlap instead of taking turns. Why this is as durable as an
// fsync inside each COMMIT is argued in the package documentation
// (Durability).
//
// An fsync that fails is fatal: the kernel may have dropped the pages it
// could not write and would report success on the next fsync, so no later
// fsync can be trusted to cover them ("fsyncgate"). Every waiting caller
// gets the error, and so does every later write: the store takes none
// until it is opened again, when SQLite recovers the WAL from what the
// disk holds.
type walSync struct {
	name string
	file *os.File
	sync func(f *os.File) error

	mu sync.Mutex
	// waiting are the requests of the batches committed since the last
	// fsync began, answered after the next one.
	waiting []*request
	// syncing is set while an fsync is being made for waiting requests.
	syncing bool
	// failed is the error of the first failed fsync; once set, it is the
	// answer to every write.
	failed error

	wake    chan struct{} // one token: waiting is not empty
	idle    chan struct{} // one token: the fsyncer may have become idle
	quit    chan struct{} // closed by stop
	stopped chan struct{}
	syncs   atomic.Uint64
}

// openWALSync opens the WAL file of the database on conn, which must be in
// WAL mode, and makes sure its directory entry is on disk. hook, when not
// nil, replaces the fsync.
func openWALSync(ctx context.Context, conn *sql.Conn, hook func(*os.File) error) (*walSync, error) {
	// The name SQLite resolved for the main database, not the one given
	// to Open: the WAL is that name and "-wal".
	var seq int
	var schema, dbFile string
	if err := conn.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &schema, &dbFile); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if dbFile == "" {
		return nil, errors.New("wal: the database has no file name")
	}
	name := dbFile + "-wal"
	// The connection has read the database, so SQLite has opened (and
	// created) the WAL and keeps it until the connection closes: the file
	// is not created here.
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if err := syncDir(filepath.Dir(name)); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("wal: %w", err)
	}
	if hook == nil {
		hook = (*os.File).Sync
	}
	return &walSync{
		name:    name,
		file:    f,
		sync:    hook,
		wake:    make(chan struct{}, 1),
		idle:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}, nil
}

// syncDir fsyncs a directory, so that the entries of the files in it
// survive a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// add hands over the requests of a committed batch, answered after the
// next fsync. batch is the writer's and is reused: its requests are
// copied.
func (s *walSync) add(batch []*request) {
	s.mu.Lock()
	failed := s.failed
	if failed == nil {
		s.waiting = append(s.waiting, batch...)
	}
	s.mu.Unlock()
	if failed != nil {
		// The fsync that would cover this batch can no longer be trusted.
		answer(batch, failed)
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// busy reports whether batches wait for an fsync or one is being made.
func (s *walSync) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncing || len(s.waiting) > 0
}

// failure is the error of the failed fsync, if one failed.
func (s *walSync) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// loop is the fsyncer's goroutine: at each wake-up, fsync for what is
// waiting. It ends once stop is called and what was handed over before it
// is answered.
func (s *walSync) loop() {
	defer close(s.stopped)
	var spare []*request
	for {
		select {
		case <-s.wake:
			spare = s.flush(spare)
		case <-s.quit:
			s.flush(spare)
			return
		}
	}
}

// flush takes the waiting requests, fsyncs the WAL and answers them. It
// returns the emptied slice, to be swapped in next time.
func (s *walSync) flush(spare []*request) []*request {
	s.mu.Lock()
	reqs := s.waiting
	s.waiting = spare[:0]
	s.syncing = len(reqs) > 0
	s.mu.Unlock()
	if len(reqs) == 0 {
		return reqs
	}
	err := s.syncWAL()
	s.mu.Lock()
	if err != nil && s.failed == nil {
		s.failed = fmt.Errorf("sqlite: fsync %s failed, the store takes no more writes: %w", s.name, err)
	}
	err = s.failed
	s.syncing = false
	s.mu.Unlock()
	// Tell a writer holding its batch open for this fsync that it may
	// commit, before the callers answered here send their next requests.
	select {
	case s.idle <- struct{}{}:
	default:
	}
	answer(reqs, err)
	clear(reqs)
	return reqs
}

// syncWAL fsyncs the WAL file. fsync flushes the file (its inode), whatever
// descriptor wrote to it: SQLite's frames included. Should the name no
// longer be the file that was opened (SQLite deletes the WAL only when its
// last connection closes, never while the writer's is open, so this is a
// belt and braces), the new file is opened and fsynced too.
func (s *walSync) syncWAL() error {
	s.syncs.Add(1)
	if err := s.sync(s.file); err != nil {
		return err
	}
	opened, err := s.file.Stat()
	if err != nil {
		return err
	}
	current, err := os.Stat(s.name)
	if err != nil {
		return err
	}
	if os.SameFile(opened, current) {
		return nil
	}
	f, err := os.OpenFile(s.name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	_ = s.file.Close()
	s.file = f
	if err := syncDir(filepath.Dir(s.name)); err != nil {
		return err
	}
	return s.sync(f)
}

// stop makes the fsyncer answer what it was handed and end; the writer
// calls it once, after its last batch.
func (s *walSync) stop() {
	close(s.quit)
	<-s.stopped
	_ = s.file.Close()
}

// close releases the file of a walSync whose goroutine never ran (Open
// failed after opening it).
func (s *walSync) close() { _ = s.file.Close() }
