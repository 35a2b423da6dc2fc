package toolgate

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/types"
)

// The Gateway's answers to the edges (the server, the MCP endpoint, the
// command line), so that none of them reaches past the Gateway into the
// pipeline.

// Sink sees every committed execution row (Options.Sinks).
type Sink = monitor.Sink

// BreakerSnapshot is the state of one circuit breaker (Gateway.Breakers).
type BreakerSnapshot = breaker.Snapshot

// Settled is what Reconcile did with one operation whose outcome was
// unknown: its key, tool and run, and the code and observation of its
// repeat.
type Settled = pipeline.Settled

// NewRunID makes a fresh run id ("run_" and 16 hex digits), the one StartRun
// gives a run created without an id.
func NewRunID() string { return pipeline.NewRunID() }

// DefaultOwner is a fresh owner name for a process (host, pid and a random
// suffix), the one Open uses when Options.Owner is empty; a caller that
// needs to know it before Open (to open a store with the same owner) makes
// it here and passes it as Options.Owner.
func DefaultOwner() string { return pipeline.DefaultOwner() }

// Now is the gateway's clock (Options.Clock, else the wall clock): the time
// its runs, executions and approvals are stamped with.
func (g *Gateway) Now() time.Time { return g.pipeline.Now() }

// DoRun is Do for a caller that has just read the call's run (the server,
// which checks the run's owner first): it saves reading it again. run must
// be the store's current copy of c.RunID; a stale one costs a retry of the
// state commit, never a wrong update. A nil run, or one of another id, is
// read from the store as Do does.
func (g *Gateway) DoRun(ctx context.Context, c *Call, run *Run) (*Result, error) {
	return g.pipeline.CallRun(ctx, c, run)
}

// Breakers returns the state of every circuit breaker this gateway holds.
func (g *Gateway) Breakers() []BreakerSnapshot { return g.pipeline.Breakers() }

// Reconcile settles at most limit operations whose outcome is unknown (left
// started by a crash, or unknown after a timeout): each is repeated as a
// call of its own run with its recorded arguments, so the ledger runs the
// tool's verify read first (or re-sends under the same operation key where
// the dependency honours it). Nothing is executed blindly; each repeat is
// recorded in its run's history like any call.
func (g *Gateway) Reconcile(ctx context.Context, limit int) ([]Settled, error) {
	return g.pipeline.Reconcile(ctx, limit)
}

// ParsePrincipal reads a principal document strictly: a JSON object with id
// (required), permissions, limits (numbers, kept exact) and attrs; any other
// field, or one of the wrong JSON kind, is an error naming it.
func ParsePrincipal(raw []byte) (Principal, error) { return types.ParsePrincipal(raw) }
