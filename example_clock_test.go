package toolgate_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolgate/toolgate"
)

// stillClock is a library user's own clock, built from nothing of
// toolgate's: it stays at one instant until moved, and a sleep moves it
// forward at once instead of waiting. The gateway calls it from every call
// in flight, so it is safe for concurrent use.
type stillClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's instant.
func (c *stillClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock by d at once, unless ctx is already done.
func (c *stillClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// Advance moves the clock forward by d.
func (c *stillClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A test of a program that embeds toolgate injects its own clock: runs,
// executions and approvals are stamped with its time, and back-off sleeps on
// it.
func ExampleClock() {
	ctx := context.Background()
	var clk toolgate.Clock = &stillClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: echoConfig(), Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	run, _ := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_42"}})
	fmt.Println(gw.Now().Format(time.RFC3339), run.CreatedAt.Format(time.RFC3339))
	// Output:
	// 2026-12-01T09:00:00Z 2026-12-01T09:00:00Z
}
