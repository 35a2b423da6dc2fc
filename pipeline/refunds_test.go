package pipeline_test

import (
	"strconv"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// refundsConfig is the refunds fixture as the refund incident runs it (the
// configuration toolgate demo runs) against a provider at base: get_order,
// list_refunds and issue_refund with timeouts and retries, every duration
// divided by speed; honourKeys says the provider dedupes on
// Idempotency-Key, else issue_refund sends no key and verifies with
// list_refunds.
func refundsConfig(base string, speed float64, honourKeys bool) *config.Config {
	d := func(x time.Duration) string { return strconv.Quote(time.Duration(float64(x) / speed).String()) }
	readTimeout := "{connect: " + d(time.Second) + ", read: " + d(2*time.Second) + "}"
	opts := []refunds.Option{
		refunds.Set("tools.get_order.timeout", readTimeout),
		refunds.Set("tools.list_refunds.timeout", readTimeout),
		refunds.Set("tools.list_refunds.input_schema.additionalProperties", "false"),
		refunds.Add("tools.issue_refund", "{timeout: {connect: "+d(2*time.Second)+", read: "+d(5*time.Second)+"}, "+
			"retry: {max_attempts: 4, base: "+d(time.Second)+", cap: "+d(30*time.Second)+"}}"),
	}
	if honourKeys {
		opts = append(opts, refunds.Delete("tools.issue_refund.verify"))
	} else {
		opts = append(opts, refunds.Delete("tools.issue_refund.idempotency.header"))
	}
	cfg, err := config.Parse([]byte(refunds.Config(base, opts...)), "", nil)
	if err != nil {
		panic("the refunds fixture does not parse: " + err.Error())
	}
	cfg.Version = "" // a version of the content, as for a Config built in Go: a test's change makes another
	return cfg
}
