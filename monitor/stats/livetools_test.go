package stats

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
)

// TestLiveToolsGiveTimeouts: a tool that only the live tools know (one
// imported from an MCP server after the aggregator was made) gets its read
// timeout from them.
func TestLiveToolsGiveTimeouts(t *testing.T) {
	clk := newClock()
	live := testTools(t)
	live.Tools["create_refund"] = &config.Tool{Name: "create_refund", Timeout: config.Timeout{Read: config.Duration(7 * time.Second)}}
	agg := newAgg(t, newStore(t, "memory", clk), clk, "r1", sketchOnly, func(c *Config) {
		c.LiveTools = func() *config.Config { return live }
	})
	agg.Record(row("create_refund", clk.Now(), 120))
	rep, err := agg.Query(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Tools["create_refund"]
	if f == nil || f.TimeoutMS != 7000 {
		t.Fatalf("create_refund's figures: %+v", f)
	}
}
