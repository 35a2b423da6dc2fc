package pipeline

import (
	"context"
	"time"
)

// QuotaUse is one quota key's use inside its window, as GET /v1/quotas
// shows it.
type QuotaUse struct {
	Quota string `json:"quota"`
	Key   string `json:"key"`
	// Used is the sum of the reservations inside the window; Left is
	// Limit - Used (never below 0).
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"`
	Left  int64 `json:"left"`
	// Window is the quota's window ("24h0m0s"); WindowMS the same in ms.
	Window   string `json:"window"`
	WindowMS int64  `json:"window_ms"`
	// Reservations counts the calls inside the window.
	Reservations int `json:"reservations"`
	// NextFreeAt is when the oldest reservation stops counting.
	NextFreeAt time.Time `json:"next_free_at"`
}

// QuotaUsage lists the use of every quota key that has a reservation
// inside its window, for the quotas the config names, by quota then key.
func (p *Pipeline) QuotaUsage(ctx context.Context) ([]QuotaUse, error) {
	windows := map[string]time.Duration{}
	limits := map[string]int64{}
	for _, t := range p.Tools().Tools {
		if t == nil {
			continue
		}
		for _, q := range t.Quotas {
			windows[q.Name], limits[q.Name] = q.Window.D(), q.Limit
		}
	}
	if len(windows) == 0 {
		return []QuotaUse{}, nil
	}
	rows, err := p.store.QuotaUsage(ctx, p.Now(), windows)
	if err != nil {
		return nil, err
	}
	out := make([]QuotaUse, 0, len(rows))
	for _, r := range rows {
		limit, window := limits[r.Quota], windows[r.Quota]
		out = append(out, QuotaUse{Quota: r.Quota, Key: r.Key, Used: r.Used, Limit: limit, Left: max(limit-r.Used, 0),
			Window: window.String(), WindowMS: window.Milliseconds(), Reservations: r.Reservations,
			NextFreeAt: r.Oldest.Add(window).UTC()})
	}
	return out, nil
}
