package metrics

import "github.com/prometheus/client_golang/prometheus"

// QuotaUse is one quota key's use inside its window, as the quota gauges
// read it at each scrape.
type QuotaUse struct {
	Quota       string
	Used, Limit int64
}

// quotaCollector turns the quota keys' use into two gauges per quota (a
// label per key would grow without bound: keys are principals, orders).
type quotaCollector struct {
	uses func() []QuotaUse
}

var (
	quotaKeysDesc = prometheus.NewDesc("toolgate_quota_keys",
		"Quota keys with a reservation inside the quota's window.", []string{"quota"}, nil)
	quotaRatioDesc = prometheus.NewDesc("toolgate_quota_max_used_ratio",
		"The highest share of its limit any key of the quota has used inside the window (1: a key is full).", []string{"quota"}, nil)
)

// Describe implements prometheus.Collector.
func (c *quotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- quotaKeysDesc
	ch <- quotaRatioDesc
}

// Collect implements prometheus.Collector.
func (c *quotaCollector) Collect(ch chan<- prometheus.Metric) {
	keys := map[string]float64{}
	ratio := map[string]float64{}
	for _, u := range c.uses() {
		keys[u.Quota]++
		if u.Limit > 0 {
			ratio[u.Quota] = max(ratio[u.Quota], float64(u.Used)/float64(u.Limit))
		}
	}
	for q, n := range keys {
		ch <- prometheus.MustNewConstMetric(quotaKeysDesc, prometheus.GaugeValue, n, q)
		ch <- prometheus.MustNewConstMetric(quotaRatioDesc, prometheus.GaugeValue, ratio[q], q)
	}
}
