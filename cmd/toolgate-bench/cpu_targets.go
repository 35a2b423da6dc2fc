package main

import (
	"fmt"
	"math"

	"github.com/toolgate/toolgate/bench/load"
)

// The CPU-per-call goals of issue 31, each against a floor of the same
// run: read and durable write against the proxy's CPU per call, the
// PostgreSQL write (toolgate and the cluster) against the SQLite write's,
// and the cluster's own share.
const (
	readCPULimit     = 1.5
	writeCPULimit    = 2.5
	postgresCPULimit = 1.5
	postgresDBLimit  = 150.0
)

// cpuConcurrency is the number of callers the CPU goals are judged at.
const cpuConcurrency = 32

// cpuTargets are the goals judged on the load comparison's CPU per call
// at cpuConcurrency callers.
func cpuTargets(d *reportData) []target {
	nan := math.NaN()
	cpu := func(p load.Path) float64 {
		if d.Load == nil {
			return nan
		}
		if r := d.Load.Get(p, cpuConcurrency); r != nil && r.CPUPerCallUS != 0 {
			return r.CPUPerCallUS
		}
		return nan
	}
	proxy, read, write, pg := cpu(load.Proxy), cpu(load.Read), cpu(load.Write), cpu(load.PGWrite)
	pgDB := nan
	if d.Load != nil {
		if r := d.Load.Get(load.PGWrite, cpuConcurrency); r != nil && r.DBCPUPerCallUS != 0 {
			pgDB = r.DBCPUPerCallUS
		}
	}
	at := fmt.Sprintf(" at %d callers", cpuConcurrency)
	proxyFloor := "(b) httputil.ReverseProxy" + at + ": " + fmtMaybe(proxy, fmtUS) + " of CPU per call"
	return []target{
		newTarget("read through toolgate / ReverseProxy, CPU per call"+at+" ((c)/(b))",
			read/proxy, readCPULimit, false, "x", fmtRatio, "load comparison, CPU").with("read-cpu", proxyFloor, string(load.Read)),
		newTarget("durable write through toolgate / ReverseProxy, CPU per call"+at+" ((d)/(b))",
			write/proxy, writeCPULimit, false, "x", fmtRatio, "load comparison, CPU").with("write-cpu", proxyFloor, string(load.Write)),
		newTarget("durable write on PostgreSQL (toolgate + PostgreSQL) / on SQLite, CPU per call"+at+" ((e)/(d))",
			pg/write, postgresCPULimit, false, "x", fmtRatio, "load comparison, CPU").
			with("postgres-cpu", "(d) toolgate write on SQLite"+at+": "+fmtMaybe(write, fmtUS)+" of CPU per call", ""),
		newTarget("durable write on PostgreSQL: the PostgreSQL cluster's CPU per call"+at+" ((e))",
			pgDB, postgresDBLimit, false, "µs", fmtUS, "load comparison, CPU").with("postgres-db-cpu", "", ""),
	}
}
