package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
	"github.com/toolgate/toolgate/internal/faultproxy"
)

// postgresFaults puts a fault proxy in front of the PostgreSQL database at
// dbURL: it returns the URL toolgate is to use (through the proxy), the
// database's faults for the schedule, and a func that closes the proxy.
// The faults: a blackhole ended by resetting every connection, answers
// 1.5 s late, and resets.
func postgresFaults(dbURL string) (string, []faultcheck.Maker, func(), error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", nil, nil, fmt.Errorf("%w: --store %q: want sqlite or a postgres://host:port/... URL", errUsage, dbURL)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		return "", nil, nil, err
	}
	u.Host = proxy.Addr()
	fault := func(name string, apply, heal func() error) faultcheck.Maker {
		return func(gap, hold time.Duration) *faultcheck.Fault {
			return &faultcheck.Fault{Name: "postgres " + name, Gap: gap, Hold: hold, Apply: apply, Heal: heal}
		}
	}
	resetThenHeal := func() error {
		if err := proxy.Reset(); err != nil {
			return err
		}
		return proxy.Heal()
	}
	makers := []faultcheck.Maker{
		fault("blackhole then reset", proxy.Blackhole, resetThenHeal),
		fault("latency", func() error { return proxy.Latency(1500 * time.Millisecond) }, proxy.Heal),
		fault("reset", proxy.Reset, proxy.Heal),
	}
	return u.String(), makers, func() { proxy.Close() }, nil
}
