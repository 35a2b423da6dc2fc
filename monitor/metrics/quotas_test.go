package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestQuotaGauges(t *testing.T) {
	m := New(Config{NoRuntime: true, Quotas: func() []QuotaUse {
		return []QuotaUse{
			{Quota: "refunds_per_customer", Used: 400000, Limit: 500000},
			{Quota: "refunds_per_customer", Used: 100000, Limit: 500000},
			{Quota: "emails", Used: 20, Limit: 20},
		}
	}})
	want := `
# HELP toolgate_quota_keys Quota keys with a reservation inside the quota's window.
# TYPE toolgate_quota_keys gauge
toolgate_quota_keys{quota="emails"} 1
toolgate_quota_keys{quota="refunds_per_customer"} 2
# HELP toolgate_quota_max_used_ratio The highest share of its limit any key of the quota has used inside the window (1: a key is full).
# TYPE toolgate_quota_max_used_ratio gauge
toolgate_quota_max_used_ratio{quota="emails"} 1
toolgate_quota_max_used_ratio{quota="refunds_per_customer"} 0.8
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "toolgate_quota_keys", "toolgate_quota_max_used_ratio"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(m.Registry()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
