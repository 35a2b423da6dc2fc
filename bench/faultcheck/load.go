package faultcheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/toolgate/toolgate/types"
)

// History is every call of a run, safe for concurrent use.
type History struct {
	mu     sync.Mutex
	calls  []*Call
	nextOp int
}

// add records a finished call.
func (h *History) add(c *Call) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
}

// Calls returns the calls recorded so far.
func (h *History) Calls() []*Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Call(nil), h.calls...)
}

// newOrder numbers a new operation: its order and its amount are its own.
func (h *History) newOrder() (string, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextOp++
	return fmt.Sprintf("ORD-%d", h.nextOp), int64(100 + h.nextOp)
}

// caller is one of the load's callers: its own run, its own randomness.
type caller struct {
	id     int
	run    string
	rng    *rand.Rand
	cl     *client
	h      *History
	n      int
	writes []*Call // its writes not answered ok, to repeat
	mcp    bool    // ToolMCP is one of its write tools
}

// Mix of a caller's calls, in percent: the rest are new writes.
const (
	readPercent   = 20
	repeatPercent = 15
)

// next makes the caller's next call: a read, a repeat of one of its
// writes whose answer was not ok (same run and arguments: the same
// operation), or a new write on a new order, on one of the write tools
// drawn at random.
func (c *caller) next() *Call {
	c.n++
	call := &Call{ID: fmt.Sprintf("c%02d-%06d", c.id, c.n), Run: c.run}
	switch x := c.rng.IntN(100); {
	case x < readPercent:
		call.Tool = ToolRead
		call.Order = fmt.Sprintf("ORD-%d", 1+c.rng.IntN(max(1, c.n)))
	case x < readPercent+repeatPercent && len(c.writes) > 0:
		i := c.rng.IntN(len(c.writes))
		w := c.writes[i]
		call.Tool, call.Order, call.Amount = w.Tool, w.Order, w.Amount
		c.writes = append(c.writes[:i], c.writes[i+1:]...)
	default:
		tools := []string{ToolVerified, ToolKeyed, ToolMCP}
		if !c.mcp {
			tools = tools[:2]
		}
		call.Tool = tools[c.rng.IntN(len(tools))]
		call.Order, call.Amount = c.h.newOrder()
	}
	return call
}

// done records a finished call and keeps a write to repeat when its
// answer was not ok (a repeat is how an agent settles an unknown outcome).
func (c *caller) done(call *Call) {
	c.h.add(call)
	if call.Tool != ToolRead && call.Code() != types.CodeOK && len(c.writes) < 64 {
		c.writes = append(c.writes, call)
	}
}

// loop sends calls, one at a time, every pace, until ctx ends.
func (c *caller) loop(ctx context.Context, pace time.Duration) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for {
		call := c.next()
		c.cl.call(context.WithoutCancel(ctx), call)
		c.done(call)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
