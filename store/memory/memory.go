// Package memory is an in-memory store.Store: one mutex over a few maps.
//
// It keeps nothing across restarts, so it suits tests, benchmarks and
// development. Values are copied in and out: a caller never shares a slice
// or a map with the store.
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

var _ store.Store = (*Store)(nil)

// Store is an in-memory store.Store. The zero value is not usable; call New.
type Store struct {
	mu         sync.Mutex
	closed     bool
	runs       map[string]*types.Run
	operations map[string]*operation
	// opSeq orders operations created at the same instant.
	opSeq uint64
	// executions is in ID order: IDs start at 1 and only grow.
	executions execLog
	lastExecID int64
	now        func() time.Time
	stats      map[statsKey]store.StatsBucket
	approvals  map[string]*store.Approval
	limits     limits
}

// operation is a ledger record and its insertion number.
type operation struct {
	types.Operation
	seq uint64
}

// New returns an empty store whose timestamps (CreatedAt and UpdatedAt left
// zero by the caller) come from time.Now.
func New() *Store {
	return &Store{
		runs:       make(map[string]*types.Run),
		operations: make(map[string]*operation),
		now:        time.Now,
	}
}

// NewWithClock returns an empty store whose timestamps (CreatedAt and
// UpdatedAt left zero by the caller, and the ones AbandonOwner stamps) come
// from now. Tests that run on a fake clock give
// it their clock's Now, so that no wall-clock time meets a fixed one.
func NewWithClock(now func() time.Time) *Store {
	s := New()
	if now != nil {
		s.now = now
	}
	return s
}

// Ping answers nil until the store is closed.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usable(ctx)
}

// Close drops every record. Later calls, Close included, fail with
// store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	s.runs, s.operations, s.executions = nil, nil, execLog{}
	return nil
}

// usable reports why a call cannot be served: ErrClosed or ctx's error.
// s.mu must be held.
func (s *Store) usable(ctx context.Context) error {
	if s.closed {
		return store.ErrClosed
	}
	return ctx.Err()
}
