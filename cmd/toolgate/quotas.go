package main

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/monitor/metrics"
)

// quotaScrapeTimeout bounds the store read of one scrape's quota gauges.
const quotaScrapeTimeout = 2 * time.Second

// quotas reads the quota keys' use for the metrics' gauges; none before
// the gateway is attached, or when the store cannot say.
func (m *monitoring) quotas() []metrics.QuotaUse {
	gw := m.gw.Load()
	if gw == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), quotaScrapeTimeout)
	defer cancel()
	uses, err := gw.QuotaUsage(ctx)
	if err != nil {
		return nil
	}
	out := make([]metrics.QuotaUse, len(uses))
	for i, u := range uses {
		out[i] = metrics.QuotaUse{Quota: u.Quota, Used: u.Used, Limit: u.Limit}
	}
	return out
}
